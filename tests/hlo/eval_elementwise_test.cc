// Placeholder: tests land with their work item.
