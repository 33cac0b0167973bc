# cmake/install.cmake - where `cmake --install` (make install, make deb) puts kerf.
# Layout (docs/INSTALL.md):
#   bin/                 kerf, kerfd, kerf-supervise (beside kerfd: kerfd runs it), kerf-sim,
#                        kerf-load (the POC workload; kerfd stages it for tasks)
#   lib/kerf/            libkerf-cuda.so (the shim), the simulated libcuda.so.1 and
#                        libnvidia-ml.so.1, spank_kerf.so: a private directory the loader never
#                        searches, so the simulated NVIDIA libraries never shadow a real driver's
#   /etc/kerf/kerfd.yaml the default configuration (a conffile in the package)
#   /lib/systemd/system  kerfd.service
#   share/man, share/bash-completion, share/zsh, share/doc/kerf, share/kerf/{examples,slurm,
#   prometheus,grafana}
include(GNUInstallDirs)
# not CMAKE_INSTALL_LIBDIR (lib/x86_64-linux-gnu on Debian): kerfd looks in <bin>/../lib/kerf
set(KERF_PRIVLIB lib/kerf)

foreach(t kerf kerfd kerf-supervise kerf-sim kerf-load)
  if(TARGET ${t})
    install(TARGETS ${t} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
foreach(t kerf_shim kerf_simcuda kerf_sim_nvml spank_kerf)
  if(TARGET ${t})
    # NAMELINK_SKIP: libcuda.so / libnvidia-ml.so (link-time names) are not installed
    install(TARGETS ${t} LIBRARY DESTINATION ${KERF_PRIVLIB} NAMELINK_SKIP)
  endif()
endforeach()

install(FILES packaging/kerfd.yaml DESTINATION /etc/kerf)
install(FILES packaging/kerfd.service DESTINATION /lib/systemd/system)
install(FILES examples/fleet-8xh200.yaml examples/fleet-mixed-64.yaml examples/kerfd.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kerf/examples)
install(DIRECTORY packaging/slurm/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kerf/slurm)
foreach(d prometheus grafana)
  if(EXISTS ${CMAKE_SOURCE_DIR}/packaging/${d})
    install(DIRECTORY packaging/${d}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kerf/${d})
  endif()
endforeach()
install(FILES packaging/completion/kerf.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME kerf)
install(FILES packaging/completion/_kerf DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
file(GLOB KERF_DOCS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES README.md ${KERF_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR})
# man pages: generated at build time (tools/man.sh) from each program's --help / the docs
if(TARGET kerf_man)
  install(DIRECTORY ${CMAKE_BINARY_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR})
endif()
