// TODO(foundation): implemented by the evaluator_elementwise work item.
