# Runs one PTX FileCheck test of tests/gpu/ptx/ (see tests/gpu/CMakeLists.txt):
#   cmake -DRETARGET=... -DFILECHECK=... -DCHECK_FILE=... -P run_ptx_check.cmake
# The file's `// RUN:` line documents the command (`retarget compile FILE --target gpu --emit
# ptx`); with `expect=error` the command must fail and its stderr is checked instead of stdout.
# Successful compiles are also checked for the absence of local memory (--implicit-check-not).
foreach(variable RETARGET FILECHECK CHECK_FILE)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_ptx_check.cmake: -D${variable}=... is required")
  endif()
endforeach()
file(STRINGS "${CHECK_FILE}" run_lines REGEX "^//[ \t]*RUN:")
if(NOT run_lines MATCHES "--emit ptx")
  message(FATAL_ERROR "${CHECK_FILE}: expected one '// RUN: retarget compile %s --target gpu --emit ptx' line")
endif()
set(expect_error FALSE)
if(run_lines MATCHES "expect=error")
  set(expect_error TRUE)
endif()
execute_process(
  COMMAND "${RETARGET}" compile "${CHECK_FILE}" --target gpu --emit ptx
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(extra_args)
if(expect_error)
  if(status EQUAL 0)
    message(FATAL_ERROR "${CHECK_FILE}: expect=error, but the compile succeeded")
  endif()
  set(checked "${err}")
else()
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${CHECK_FILE}: compile failed (${status}):\n${err}")
  endif()
  set(checked "${out}")
  set(extra_args "--implicit-check-not=.local")
endif()
string(MD5 file_hash "${CHECK_FILE}")
set(output_file "${CMAKE_CURRENT_BINARY_DIR}/ptx_check_${file_hash}.out")
file(WRITE "${output_file}" "${checked}")
execute_process(
  COMMAND "${FILECHECK}" "${CHECK_FILE}" --input-file "${output_file}" ${extra_args}
  RESULT_VARIABLE check_status ERROR_VARIABLE check_stderr)
file(REMOVE "${output_file}")
if(NOT check_status EQUAL 0)
  message(FATAL_ERROR "${CHECK_FILE}: FileCheck failed:\n${check_stderr}")
endif()
