// TODO(foundation): implemented by the evaluator_contraction work item.
