# src/daemon/exec.cmake - the executor and device fencing library (included by src/daemon)
if(NOT TARGET kerf_exec)
  add_library(kerf_exec STATIC
    ${CMAKE_CURRENT_LIST_DIR}/exec.c
    ${CMAKE_CURRENT_LIST_DIR}/exec_env.c
    ${CMAKE_CURRENT_LIST_DIR}/fence.c
    ${CMAKE_CURRENT_LIST_DIR}/fence_bpf.c)
  target_include_directories(kerf_exec PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(kerf_exec PUBLIC kerf_core kerf_common)
endif()
