# cuentry's CMake package: cuentry_generate() writes a loader header from a manifest at build time.
#
#   execute_process(COMMAND "${Python3_EXECUTABLE}" -m cuentry --cmake-dir
#                   OUTPUT_VARIABLE cuentry_DIR OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
#   find_package(cuentry CONFIG REQUIRED)
#   add_library(mylib src/mylib.cpp)
#   cuentry_generate(mylib mylib.toml)               # mylib.h, on mylib's include path
#
# cuentry_generate(<target> <manifest> [OUTPUT <name.h>] [SCOPE PRIVATE|PUBLIC|INTERFACE] [STATIC])
#   Generates <name.h> (default: the manifest's name with .h) into
#   ${CMAKE_CURRENT_BINARY_DIR}/cuentry/<target>/ with `python -m cuentry generate c`, again whenever the
#   manifest (or cuentry's header template, after an upgrade) changes; adds that directory to the
#   target's include path (SCOPE, default PRIVATE) and links the loader's needs (dl, threads).
#   STATIC defines <NAME>_STATIC for the target: the header-only mode (a private loader in every file).
#   The Python interpreter is CUENTRY_PYTHON, else Python3_EXECUTABLE / Python_EXECUTABLE.
include_guard(GLOBAL)
cmake_minimum_required(VERSION 3.16)

set(_cuentry_dir "${CMAKE_CURRENT_LIST_DIR}")
set(cuentry_FOUND TRUE)

find_package(Threads REQUIRED)

function(_cuentry_python out)
  if(DEFINED CUENTRY_PYTHON)
    set(${out} "${CUENTRY_PYTHON}" PARENT_SCOPE)
  elseif(DEFINED Python3_EXECUTABLE)
    set(${out} "${Python3_EXECUTABLE}" PARENT_SCOPE)
  elseif(DEFINED Python_EXECUTABLE)
    set(${out} "${Python_EXECUTABLE}" PARENT_SCOPE)
  else()
    find_package(Python3 COMPONENTS Interpreter REQUIRED)
    set(${out} "${Python3_EXECUTABLE}" PARENT_SCOPE)
  endif()
endfunction()

function(cuentry_generate target manifest)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "STATIC" "OUTPUT;SCOPE" "")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cuentry_generate: unknown arguments ${ARG_UNPARSED_ARGUMENTS} "
                        "(expected OUTPUT <name.h>, SCOPE PRIVATE|PUBLIC|INTERFACE, STATIC)")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "cuentry_generate: ${target} is not a target: call it after add_library/add_executable")
  endif()
  get_filename_component(_manifest "${manifest}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${_manifest}")
    message(FATAL_ERROR "cuentry_generate: no manifest at ${_manifest}")
  endif()
  get_filename_component(_stem "${_manifest}" NAME_WE)
  if(NOT ARG_OUTPUT)
    set(ARG_OUTPUT "${_stem}.h")
  endif()
  if(NOT ARG_SCOPE)
    set(ARG_SCOPE PRIVATE)
  endif()
  _cuentry_python(_python)
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/cuentry/${target}")
  set(_out "${_dir}/${ARG_OUTPUT}")
  set(_deps "${_manifest}")
  set(_template "${_cuentry_dir}/../generate/templates/loader.h.in")
  if(EXISTS "${_template}")
    list(APPEND _deps "${_template}")
  endif()
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_dir}"
    COMMAND "${_python}" -m cuentry -q generate c "${_manifest}" -o "${_out}"
    DEPENDS ${_deps}
    COMMENT "cuentry: generating ${ARG_OUTPUT} from ${manifest}"
    VERBATIM)
  target_sources(${target} PRIVATE "${_out}")
  if(ARG_SCOPE STREQUAL "INTERFACE")
    target_include_directories(${target} INTERFACE "$<BUILD_INTERFACE:${_dir}>")
  else()
    target_include_directories(${target} ${ARG_SCOPE} "$<BUILD_INTERFACE:${_dir}>")
  endif()
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  if(ARG_STATIC)
    string(TOUPPER "${_stem}" _upper)
    target_compile_definitions(${target} PRIVATE "${_upper}_STATIC")
  endif()
endfunction()
