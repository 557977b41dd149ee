# Read by ctest (TEST_INCLUDE_FILES, after the GoogleTest-discovered tests are defined): labels
# the whole-model corpus runs "slow", so `ctest -LE slow` skips them and `ctest -L slow` runs
# only them. ctest ignores names it does not know (e.g. before the binary is built).
set_tests_properties(
  CorpusRunSlow.DlrmTestStepUpdatesItsMetrics
  CorpusRunSlow.ResNet50ProducesAProbabilityDistribution
  PROPERTIES LABELS slow)
