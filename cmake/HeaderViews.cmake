# Per-target include directories that enforce the layering.
#
# Every include reads from the repository root ("traces/timeline.h"), but no target sees the root:
# each library (and executable) gets a view directory in the build tree, holding symbolic links to
# its own headers only, at their repository paths. A target's include path is its own view plus
# the views of what it links (PUBLIC propagation), so a file can include exactly the headers of
# the libraries its target links, and an include against the documented direction fails to
# compile instead of passing until someone notices. tests/house/layering_test.cpp checks the
# folder table on top of this.
#
# meshscope_headers(<target> [HEADERS <files...>] [RECURSE <folder>])
#   Without HEADERS: the *.h / *.cuh / *.inc files beside the target's own sources (one level,
#   no sub-folders), minus headers an earlier call already claimed (traces/ holds the core
#   headers of meshscope::timeline and those of meshscope::traces side by side).
#   HEADERS: exactly these (paths relative to the current source directory).
#   RECURSE: every header under <folder> (relative to the project root), for the tests' helpers.

function(_meshscope_link_header view abs)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
  get_filename_component(dir ${view}/${rel} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  if(NOT EXISTS ${view}/${rel} AND NOT IS_SYMLINK ${view}/${rel})
    file(CREATE_LINK ${abs} ${view}/${rel} SYMBOLIC)
  endif()
endfunction()

function(meshscope_headers target)
  cmake_parse_arguments(ARG "" "RECURSE" "HEADERS" ${ARGN})
  set(view ${PROJECT_BINARY_DIR}/include-views/${target})
  # A fresh view each configure, so a header that moved or was deleted does not linger.
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view})
  get_property(claimed GLOBAL PROPERTY MESHSCOPE_CLAIMED_HEADERS)
  set(headers "")
  if(ARG_HEADERS)
    foreach(h ${ARG_HEADERS})
      get_filename_component(abs ${h} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      list(APPEND headers ${abs})
    endforeach()
  elseif(ARG_RECURSE)
    file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${ARG_RECURSE}/*.h)
  else()
    get_target_property(sources ${target} SOURCES)
    set(folders "")
    foreach(s ${sources})
      get_filename_component(abs ${s} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      get_filename_component(dir ${abs} DIRECTORY)
      file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir})
      if(NOT rel MATCHES "^\\.\\.")  # sources from outside the tree (ImGui's backends)
        list(APPEND folders ${dir})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES folders)
    foreach(dir ${folders})
      file(GLOB found CONFIGURE_DEPENDS ${dir}/*.h ${dir}/*.cuh ${dir}/*.inc)
      list(APPEND headers ${found})
    endforeach()
    if(claimed)
      list(REMOVE_ITEM headers ${claimed})
    endif()
  endif()
  foreach(abs ${headers})
    _meshscope_link_header(${view} ${abs})
  endforeach()
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "EXECUTABLE" AND NOT type STREQUAL "MODULE_LIBRARY")
    set_property(GLOBAL APPEND PROPERTY MESHSCOPE_CLAIMED_HEADERS ${headers})
  endif()
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${view})
  elseif(type STREQUAL "EXECUTABLE" OR type STREQUAL "MODULE_LIBRARY")
    target_include_directories(${target} PRIVATE ${view})
  else()
    target_include_directories(${target} PUBLIC ${view})
  endif()
endfunction()
