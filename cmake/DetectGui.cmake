# Dear ImGui from Debian's libimgui-dev (its GLFW and OpenGL3 backends ship as sources under
# /usr/share/doc/libimgui-dev/examples/backends), GLFW and OpenGL.
set(_gui_found FALSE)
if(NOT MESHSCOPE_GUI STREQUAL "OFF")
  find_package(glfw3 QUIET)
  find_package(OpenGL QUIET)
  find_path(MESHSCOPE_IMGUI_INCLUDE imgui.h PATH_SUFFIXES imgui)
  find_library(MESHSCOPE_IMGUI_LIBRARY imgui)
  find_path(MESHSCOPE_IMGUI_BACKENDS imgui_impl_glfw.cpp
            PATHS /usr/share/doc/libimgui-dev/examples/backends NO_DEFAULT_PATH)
  if(glfw3_FOUND AND OpenGL_FOUND AND MESHSCOPE_IMGUI_INCLUDE AND MESHSCOPE_IMGUI_LIBRARY
     AND MESHSCOPE_IMGUI_BACKENDS)
    set(_gui_found TRUE)
  endif()
endif()
meshscope_resolve(MESHSCOPE_GUI ${_gui_found} "GLFW, OpenGL or Dear ImGui (libimgui-dev)")
