// TODO(foundation): implemented by the evaluator_control work item.
