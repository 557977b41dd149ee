// TODO(foundation): implemented by the lexer work item.
