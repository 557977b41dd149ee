# Read by ctest after the GoogleTest-discovered tests are defined: labels the whole-model
# systolic runs "slow" (`ctest -LE slow` skips them). Unknown names are ignored.
set_tests_properties(
  SystolicCorpusSlow.ResNet50MatchesTheInterpreterOnTwoArraySizes
  PROPERTIES LABELS slow)
