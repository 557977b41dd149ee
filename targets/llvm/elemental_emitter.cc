// Placeholder: being written (see the matching header).
