// TODO(foundation): implemented by the evaluator_reduction work item.
