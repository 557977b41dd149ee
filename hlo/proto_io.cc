// TODO(foundation): implemented by the proto_io work item.
