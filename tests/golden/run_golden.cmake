# Runs one golden test (see CMakeLists.txt here): cmake -DRETARGET=... -DFILECHECK=...
# -DGOLDEN_FILE=... -P run_golden.cmake. Fails with a message naming the file when the RUN line
# is missing or malformed, when `retarget opt` fails (or, with expect=error, succeeds), or when
# FileCheck rejects the output.
foreach(variable RETARGET FILECHECK GOLDEN_FILE)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_golden.cmake: -D${variable}=... is required")
  endif()
endforeach()

file(STRINGS "${GOLDEN_FILE}" run_lines REGEX "^[ \t]*//[ \t]*RUN:")
list(LENGTH run_lines run_count)
if(NOT run_count EQUAL 1)
  message(FATAL_ERROR "${GOLDEN_FILE}: expected exactly one '// RUN: passes=... target=...' "
                      "line, found ${run_count}")
endif()
if(NOT run_lines MATCHES "passes=([^ \t]*)")
  message(FATAL_ERROR "${GOLDEN_FILE}: the RUN line has no passes=LIST")
endif()
set(passes "${CMAKE_MATCH_1}")
if(NOT run_lines MATCHES "target=([a-z]+)")
  message(FATAL_ERROR "${GOLDEN_FILE}: the RUN line has no target=T")
endif()
set(target "${CMAKE_MATCH_1}")
set(expect_error FALSE)
if(run_lines MATCHES "expect=error")
  set(expect_error TRUE)
endif()

execute_process(
  COMMAND "${RETARGET}" opt "${GOLDEN_FILE}" --passes "${passes}" --target "${target}"
  RESULT_VARIABLE opt_status OUTPUT_VARIABLE opt_stdout ERROR_VARIABLE opt_stderr)
if(expect_error)
  if(opt_status EQUAL 0)
    message(FATAL_ERROR "${GOLDEN_FILE}: expect=error, but `retarget opt` succeeded")
  endif()
  set(checked_text "${opt_stderr}")
else()
  if(NOT opt_status EQUAL 0)
    message(FATAL_ERROR "${GOLDEN_FILE}: `retarget opt --passes ${passes} --target ${target}` "
                        "failed (${opt_status}):\n${opt_stderr}")
  endif()
  set(checked_text "${opt_stdout}")
endif()

# FileCheck reads the text to check on stdin; a temporary file keeps this portable.
string(MD5 file_hash "${GOLDEN_FILE}")
set(output_file "${CMAKE_CURRENT_BINARY_DIR}/golden_${file_hash}.out")
file(WRITE "${output_file}" "${checked_text}")
execute_process(
  COMMAND "${FILECHECK}" "${GOLDEN_FILE}" --input-file "${output_file}"
  RESULT_VARIABLE check_status ERROR_VARIABLE check_stderr)
file(REMOVE "${output_file}")
if(NOT check_status EQUAL 0)
  message(FATAL_ERROR "${GOLDEN_FILE}: FileCheck failed:\n${check_stderr}\n"
                      "(regenerate with scripts/bless_golden.py if the change is intended)")
endif()
