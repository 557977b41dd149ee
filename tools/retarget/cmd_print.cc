// TODO(foundation)
