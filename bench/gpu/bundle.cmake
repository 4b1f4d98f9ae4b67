# Makes a self-contained tawa for a GPU machine that has the CUDA toolkit and driver but none of the
# Debian libraries tawa was built against. Run by the `gpu-bundle` target:
#   cmake -DTAWA_EXE=build/tawa -DSRC=. -DOUT=build/gpu-bundle -P bench/gpu/bundle.cmake
# Layout of OUT:
#   bin/tawa        the executable as built
#   bin/tawa.sh     runs it through the bundled loader: lib/ld-linux-x86-64.so.2 --library-path lib
#   lib/            every shared library `ldd bin/tawa` lists (the C library and the loader included,
#                   so the host's own glibc version does not matter), and libdl, libpthread and librt
#                   of the same glibc for the libraries tawa dlopens; child processes (nvcc, ptxas)
#                   get the host's libraries, since no environment variable is changed for them
#   lib-host/       the same minus the C library, for TAWA_BUNDLE_LOADER=host (bin/tawa.sh)
#   include/        primitives.cuh (bin/tawa.sh points TAWA_CUDA_INCLUDE here)
#   examples/       the example kernels
#   bench/          bench/gpu/*.py and *.sh
#   MANIFEST        the files and where each library came from
foreach(v TAWA_EXE SRC OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "bundle.cmake needs -D${v}=...")
  endif()
endforeach()
if(NOT EXISTS "${TAWA_EXE}")
  message(FATAL_ERROR "no tawa executable at ${TAWA_EXE}")
endif()

file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}/bin" "${OUT}/lib" "${OUT}/lib-host" "${OUT}/include" "${OUT}/bench")
file(COPY_FILE "${TAWA_EXE}" "${OUT}/bin/tawa")
file(CHMOD "${OUT}/bin/tawa" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

execute_process(COMMAND ldd "${TAWA_EXE}" OUTPUT_VARIABLE lddOut RESULT_VARIABLE lddRc ERROR_VARIABLE lddErr)
if(NOT lddRc EQUAL 0)
  message(FATAL_ERROR "ldd ${TAWA_EXE} failed: ${lddErr}")
endif()
set(manifest "tawa bundle\nexecutable: ${TAWA_EXE}\n")
set(loader "")
string(REPLACE "\n" ";" lines "${lddOut}")
foreach(line IN LISTS lines)
  string(STRIP "${line}" line)
  if(line STREQUAL "" OR line MATCHES "^linux-vdso")
    continue()
  endif()
  if(line MATCHES "not found")
    message(FATAL_ERROR "ldd: ${line}")
  endif()
  if(line MATCHES "^([^ ]+) => ([^ ]+) \\(")
    set(name "${CMAKE_MATCH_1}")
    set(path "${CMAKE_MATCH_2}")
  elseif(line MATCHES "^(/[^ ]+) \\(")
    set(path "${CMAKE_MATCH_1}")
    get_filename_component(name "${path}" NAME)
    set(loader "${name}")
  else()
    message(FATAL_ERROR "cannot read this ldd line: ${line}")
  endif()
  file(REAL_PATH "${path}" real)
  file(COPY_FILE "${real}" "${OUT}/lib/${name}")
  if(NOT name MATCHES "^(libc|libm|libdl|libpthread|librt|ld-linux.*)\\.so")
    file(COPY_FILE "${real}" "${OUT}/lib-host/${name}")
  endif()
  if(name STREQUAL "libc.so.6")
    get_filename_component(libcDir "${path}" DIRECTORY)
  endif()
  string(APPEND manifest "lib/${name} <- ${real}\n")
endforeach()
# libcuda and libnvrtc, which tawa dlopens, need libdl, libpthread and librt; taken from the host they
# would be another glibc's (stubs needing its private symbols), so the ones matching the bundled libc go
# in too.
foreach(companion libdl.so.2 libpthread.so.0 librt.so.1)
  if(NOT EXISTS "${OUT}/lib/${companion}" AND DEFINED libcDir AND EXISTS "${libcDir}/${companion}")
    file(REAL_PATH "${libcDir}/${companion}" real)
    file(COPY_FILE "${real}" "${OUT}/lib/${companion}")
    string(APPEND manifest "lib/${companion} <- ${real} (beside libc, for the libraries tawa dlopens)\n")
  endif()
endforeach()
if(loader STREQUAL "")
  message(FATAL_ERROR "ldd named no program loader (ld-linux) for ${TAWA_EXE}")
endif()
file(CHMOD "${OUT}/lib/${loader}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

file(COPY_FILE "${SRC}/src/backends/cuda/primitives.cuh" "${OUT}/include/primitives.cuh")
file(COPY "${SRC}/examples" DESTINATION "${OUT}")
file(GLOB benchFiles "${SRC}/bench/gpu/*.py" "${SRC}/bench/gpu/*.sh" "${SRC}/bench/gpu/*.md")
file(COPY ${benchFiles} DESTINATION "${OUT}/bench")

file(WRITE "${OUT}/bin/tawa.sh" "#!/bin/sh
# tawa through the bundled loader and libraries (see MANIFEST); the host's LD_LIBRARY_PATH is
# searched after the bundle so that the driver (libcuda.so.1) is still found.
# TAWA_BUNDLE_LOADER=host: the host's own loader and C library instead (glibc as new as the build's or
# newer), with only the C++ and other libraries from lib-host/.
here=\$(cd \"\$(dirname \"\$0\")/..\" && pwd)
export TAWA_CUDA_INCLUDE=\"\${TAWA_CUDA_INCLUDE:-\$here/include}\"
# tawa tune runs each kernel configuration through tawa itself: through this script, not the loader.
export TAWA_SELF=\"\$here/bin/tawa.sh\"
if [ \"\${TAWA_BUNDLE_LOADER:-}\" = host ]; then
  LD_LIBRARY_PATH=\"\$here/lib-host\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\" exec \"\$here/bin/tawa\" \"\$@\"
fi
exec \"\$here/lib/${loader}\" --library-path \"\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\" \"\$here/bin/tawa\" \"\$@\"
")
file(CHMOD "${OUT}/bin/tawa.sh" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
string(APPEND manifest "loader: lib/${loader}\n")
file(WRITE "${OUT}/MANIFEST" "${manifest}")
message(STATUS "tawa bundle in ${OUT} (run it as ${OUT}/bin/tawa.sh)")
# The commit the bundle was built from (for BENCHMARKS.md), and whether the tree had local changes.
execute_process(COMMAND git -C "${SRC}" rev-parse HEAD OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE gitRc ERROR_QUIET)
if(gitRc EQUAL 0)
  execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no OUTPUT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty STREQUAL "")
    string(APPEND commit " (with local changes)")
  endif()
  file(WRITE "${OUT}/COMMIT" "${commit}\n")
endif()
