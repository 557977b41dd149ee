// TODO(foundation): implemented by the shape_inference work item.
