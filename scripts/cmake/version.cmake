# The version ggufs prints (ggufs -V) and its Debian package carries, from one place: the
# project(VERSION) of CMakeLists.txt, plus, in a git checkout, the commit it was built from:
# 0.1.0+git81.g08e5a12 (commits in the history, then the abbreviated hash). The count makes a
# later commit's package a newer Debian version (dpkg compares its digits as a number), so
# `apt-get install ./ggufs_*.deb` upgrades; "+" keeps it a valid upstream version of a native
# package. Outside a checkout (a source tarball) it is the plain project version.
#
# Sets GGUFS_FULL_VERSION (and GGUFS_COMMIT, GGUFS_COMMIT_DATE) and writes ${PROJECT_BINARY_DIR}/generated/ggufs_version.h, which
# defines GGUFS_VERSION: a header rather than a compile definition, so that a new commit
# recompiles only the files that print the version, not every file of the targets using it.
set(GGUFS_FULL_VERSION "${PROJECT_VERSION}")
set(GGUFS_COMMIT "")       # the abbreviated hash, in a checkout
set(GGUFS_COMMIT_DATE "")  # its date, in a checkout
find_package(Git QUIET)
if(GIT_FOUND)
  # Only this source tree's own repository counts: a tarball unpacked inside another checkout
  # must not take that checkout's commit.
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --show-toplevel
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE git_toplevel OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE git_rc ERROR_QUIET)
  if(git_rc EQUAL 0)
    file(REAL_PATH "${git_toplevel}" git_toplevel)
    file(REAL_PATH "${PROJECT_SOURCE_DIR}" source_dir)
  endif()
  if(git_rc EQUAL 0 AND git_toplevel STREQUAL source_dir)
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-list --count HEAD
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE git_count OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE count_rc ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=7 HEAD
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE git_hash OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE hash_rc ERROR_QUIET)
    if(count_rc EQUAL 0 AND hash_rc EQUAL 0 AND git_count MATCHES "^[0-9]+$"
       AND git_hash MATCHES "^[0-9a-f]+$")
      set(GGUFS_FULL_VERSION "${PROJECT_VERSION}+git${git_count}.g${git_hash}")
      set(GGUFS_COMMIT "${git_hash}")
      # The commit's date (RFC 5322, as Debian's changelog wants it): the package's changelog
      # entry is dated by it, so the same commit always gives the same package contents.
      execute_process(COMMAND ${GIT_EXECUTABLE} log -1 --format=%cD
                      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                      OUTPUT_VARIABLE GGUFS_COMMIT_DATE OUTPUT_STRIP_TRAILING_WHITESPACE
                      ERROR_QUIET)
    endif()
    # Configure again when HEAD moves (a commit, a checkout), so the version stays the
    # commit's: HEAD itself, the branch it names (a loose ref, or packed-refs once packed).
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --git-path HEAD
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE head_file OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} symbolic-ref -q HEAD
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE head_ref OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    set(watched "${head_file}")
    if(head_ref)
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --git-path "${head_ref}" packed-refs
                      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                      OUTPUT_VARIABLE ref_files OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      string(REPLACE "\n" ";" ref_files "${ref_files}")
      list(APPEND watched ${ref_files})
    endif()
    foreach(f IN LISTS watched)
      if(NOT IS_ABSOLUTE "${f}")
        set(f "${PROJECT_SOURCE_DIR}/${f}")
      endif()
      if(EXISTS "${f}")
        set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${f}")
      endif()
    endforeach()
  endif()
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/ggufs_version.h.in
               ${PROJECT_BINARY_DIR}/generated/ggufs_version.h @ONLY)
