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
#   manifest or cuentry itself (its version, catalog, generator or template: an upgrade) changes; an
#   unchanged result is not rewritten, so nothing that includes it recompiles. A manifest error fails
#   the build with the manifest's path, line and column. Adds that directory to the target's include
#   path (SCOPE, default PRIVATE) and links the loader's needs (dl, threads).
#   STATIC defines <TABLE>_STATIC for the target (the table's name upper-cased: its name = "..." under
#   [table], else the manifest's file name without its extension, as the manifest defaults it): the
#   header-only mode (a private loader in every file).
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

# The table's name: its name = "..." under [table] (a line of its own, as `cuentry generate` writes and reads
# it), else the manifest's file name without its extension, as the manifest format defaults it.
function(_cuentry_table_name manifest out)
  file(STRINGS "${manifest}" _lines)
  set(_section "")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^[ \t]*\\[+[ \t]*([A-Za-z0-9_.-]+)")
      set(_section "${CMAKE_MATCH_1}")
    elseif(_section STREQUAL "table" AND _line MATCHES "^[ \t]*name[ \t]*=[ \t]*[\"']([^\"']*)[\"']")
      set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  get_filename_component(_stem "${manifest}" NAME_WLE)
  set(${out} "${_stem}" PARENT_SCOPE)
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
  set(_stamp "${_dir}/${ARG_OUTPUT}.stamp")
  # cuentry itself: its version (__init__.py), catalog, generator and template; an upgrade regenerates.
  file(GLOB _cuentry_sources LIST_DIRECTORIES false
       "${_cuentry_dir}/../__init__.py" "${_cuentry_dir}/../_catalog_data.py" "${_cuentry_dir}/../_data/*.json"
       "${_cuentry_dir}/../catalog.py" "${_cuentry_dir}/../manifest.py" "${_cuentry_dir}/../entry.py"
       "${_cuentry_dir}/../names.py" "${_cuentry_dir}/../generate/*.py" "${_cuentry_dir}/../generate/templates/*.in")
  add_custom_command(
    OUTPUT "${_stamp}"
    BYPRODUCTS "${_out}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_dir}"
    COMMAND "${_python}" -m cuentry -q generate c "${_manifest}" -o "${_out}.tmp"
    COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${_out}.tmp" "${_out}"
    COMMAND "${CMAKE_COMMAND}" -E remove "${_out}.tmp"
    COMMAND "${CMAKE_COMMAND}" -E touch "${_stamp}"
    DEPENDS "${_manifest}" ${_cuentry_sources}
    COMMENT "cuentry: generating ${ARG_OUTPUT} from ${manifest}"
    VERBATIM)
  string(MAKE_C_IDENTIFIER "cuentry_${target}_${ARG_OUTPUT}" _gen_target)
  add_custom_target(${_gen_target} DEPENDS "${_stamp}")
  add_dependencies(${target} ${_gen_target})
  set_source_files_properties("${_out}" PROPERTIES GENERATED TRUE HEADER_FILE_ONLY TRUE)
  if(ARG_SCOPE STREQUAL "INTERFACE")
    target_include_directories(${target} INTERFACE "$<BUILD_INTERFACE:${_dir}>")
  else()
    target_include_directories(${target} ${ARG_SCOPE} "$<BUILD_INTERFACE:${_dir}>")
  endif()
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  if(ARG_STATIC)
    # the name is read now: a changed manifest configures again
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_manifest}")
    _cuentry_table_name("${_manifest}" _table)
    string(TOUPPER "${_table}" _upper)
    target_compile_definitions(${target} PRIVATE "${_upper}_STATIC")
  endif()
endfunction()
