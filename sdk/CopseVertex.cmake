# copse_add_vertex(NAME SOURCES...): a vertex program NAME, built against the
# vertex runtime (Copse::vertex) of this install. Ship it to a cluster with
# `copse app put NAME <its path>` (docs/sdk.md).
function(copse_add_vertex name)
  if(NOT ARGN)
    message(FATAL_ERROR "copse_add_vertex(${name}): give the program's sources")
  endif()
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE Copse::vertex)
  target_compile_features(${name} PRIVATE cxx_std_20)
endfunction()
