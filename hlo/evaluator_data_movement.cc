// TODO(foundation): implemented by the evaluator_data_movement work item.
