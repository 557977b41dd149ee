// TODO(foundation): implemented by the printer work item.
