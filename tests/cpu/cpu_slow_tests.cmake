# Read by ctest after the discovered tests are defined: whole-model CPU-vs-interpreter runs
# whose interpreter reference takes tens of seconds are labelled "slow" (`ctest -LE slow`).
set_tests_properties(CpuCorpusSlow.ResNet50 CpuCorpusSlow.DlrmTestStep
                     CpuCorpusSlow.Gemma3AtLeastAsAccurateAsTheInterpreter PROPERTIES LABELS slow)
