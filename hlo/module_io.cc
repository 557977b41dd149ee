// TODO(foundation): implemented by the module_io work item.
