# AUTO|ON|OFF options: AUTO enables a feature when its dependencies are found, ON makes a missing
# dependency a configure error, OFF skips it.
function(meshscope_tristate name doc)
  set(${name} AUTO CACHE STRING "${doc} (AUTO|ON|OFF)")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" value)
  if(NOT value MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${name} must be AUTO, ON or OFF, not '${${name}}'")
  endif()
  set(${name} ${value} PARENT_SCOPE)
endfunction()

# Resolve a tri-state option against whether its dependencies were found; sets <name>_ENABLED.
function(meshscope_resolve name found missing_what)
  if(${name} STREQUAL "OFF")
    set(${name}_ENABLED OFF PARENT_SCOPE)
  elseif(found)
    set(${name}_ENABLED ON PARENT_SCOPE)
  elseif(${name} STREQUAL "ON")
    message(FATAL_ERROR "${name}=ON but ${missing_what} was not found")
  else()
    set(${name}_ENABLED OFF PARENT_SCOPE)
  endif()
endfunction()
