# src/daemon/exec/exec.cmake - the executor and device fencing library, and kerf-supervise (the
# per-task supervisor, installed beside kerfd) (included by src/daemon and tests/unit/exec)
if(NOT TARGET kerf_exec)
  add_library(kerf_exec STATIC
    ${CMAKE_CURRENT_LIST_DIR}/exec.c
    ${CMAKE_CURRENT_LIST_DIR}/exec_child.c
    ${CMAKE_CURRENT_LIST_DIR}/exec_launch.c
    ${CMAKE_CURRENT_LIST_DIR}/exec_env.c
    ${CMAKE_CURRENT_LIST_DIR}/exec_proc.c
    ${CMAKE_CURRENT_LIST_DIR}/fence.c
    ${CMAKE_CURRENT_LIST_DIR}/fence_bpf.c)
  target_include_directories(kerf_exec PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(kerf_exec PUBLIC kerf_core kerf_common)
  # libc only: the supervisor of every task stays small and outlives kerfd
  add_executable(kerf-supervise ${CMAKE_CURRENT_LIST_DIR}/supervise.c
                 ${CMAKE_CURRENT_LIST_DIR}/exec_proc.c)
  target_include_directories(kerf-supervise PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                             ${CMAKE_SOURCE_DIR}/include)
endif()
