# Adds a row to isa.def (RETARGET_ISA_FAKE_ROW) and compiles the three readers of the ISA's
# meaning: each must fail to compile, naming the missing handler OnVFake — a new instruction
# cannot reach the simulator without its semantics, its timing and its liveness. Without the row
# the same files compile, so the failure is the row's.
#   cmake -DCXX=... -DSOURCE_DIR=... -DSYSTEMC_INCLUDE=... -P fake_isa_row_check.cmake
set(readers simulator/functional.cc simulator/unit_timing.cc simulator/sim_liveness.cc)
set(flags -std=c++20 -fsyntax-only -I${SOURCE_DIR} -DSC_CPLUSPLUS=201703L)
if(SYSTEMC_INCLUDE AND NOT SYSTEMC_INCLUDE STREQUAL "/usr/include")  # a system folder already
  list(APPEND flags -isystem ${SYSTEMC_INCLUDE})
endif()
foreach(reader IN LISTS readers)
  execute_process(COMMAND ${CXX} ${flags} ${SOURCE_DIR}/${reader}
                  RESULT_VARIABLE plain_status OUTPUT_VARIABLE plain_out ERROR_VARIABLE plain_out)
  if(NOT plain_status EQUAL 0)
    message(FATAL_ERROR "${reader} does not compile even without the fake row:\n${plain_out}")
  endif()
  execute_process(COMMAND ${CXX} ${flags} -DRETARGET_ISA_FAKE_ROW ${SOURCE_DIR}/${reader}
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(status EQUAL 0)
    message(FATAL_ERROR "${reader} compiles with an isa.def row it has no handler for")
  endif()
  string(FIND "${out}" "OnVFake" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${reader} failed with the fake row, but not for the missing handler:\n${out}")
  endif()
  message(STATUS "${reader}: the fake row stops the build at its missing handler OnVFake")
endforeach()
