# The Debian package of ggufs, made by CPack's DEB generator (scripts/package runs it):
# ggufs_<version>_<arch>.deb with /usr/bin/ggufs, its man page, its bash completion and the
# README. Only the install component "ggufs" goes in: the tests, ggufs-sample, ggufs-bench,
# ggufs-ceiling and the static libraries have no install rule in it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ggufs)
set(CPACK_PACKAGE_VERSION "${GGUFS_FULL_VERSION}")
# One monolithic package made of the component "ggufs" alone (build dir, project, component,
# subdirectory), rather than every install rule of the build.
set(CPACK_INSTALL_CMAKE_PROJECTS "${PROJECT_BINARY_DIR};${PROJECT_NAME};ggufs;/")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Debian ships binaries without their debugging symbols.
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "mount GGUF model files as a read-only tree (FUSE)")

set(GGUFS_PACKAGE_MAINTAINER "ggufs maintainers <maintainers@ggufs.invalid>"
    CACHE STRING "Maintainer field of the Debian package (Name <address>)")
set(CPACK_DEBIAN_PACKAGE_NAME ggufs)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ggufs_<version>_<arch>.deb, Debian's naming
set(CPACK_DEBIAN_PACKAGE_VERSION "${GGUFS_FULL_VERSION}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GGUFS_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The extended description, the lines after the summary in the control file's Description
# (CPack indents each by one space; "." stands for an empty line, as Debian wants).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "ggufs mounts a GGUF model file (the format of ggml and llama.cpp) as a
read-only directory tree: metadata as small text files, tensors as their
raw bytes, as float32 dequantized on the fly and as NumPy .npy files, and
the whole model as one model.gguf (a split model merged) and as one
model.safetensors. Nothing is converted or copied to disk.
.
Models can be local files, split models, or remote: http(s) URLs, S3
objects (s3://) and Hugging Face Hub files (hf://), read with range
requests through an on-disk chunk cache. Mounts work from the command
line, from /etc/fstab (type fuse.ggufs) and from systemd units.")
# The shared libraries' packages (libfuse3, libfmt, libssl, libsystemd, libinih), computed by
# dpkg-shlibdeps from the binary, plus fuse3 for fusermount3 and mount.fuse3, which ggufs runs
# to unmount and fstab lines need, and libcurl4, which ggufs loads with dlopen for remote
# models (so dpkg-shlibdeps cannot see it): 7.85 for CURLOPT_PROTOCOLS_STR, the newest
# option it sets.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fuse3, libcurl4 (>= 7.85.0)")

# /usr/share/doc/ggufs/changelog.gz, which Debian wants in every package: one entry, for the
# version packaged (dated by its commit, else by the time of configuring, or SOURCE_DATE_EPOCH).
if(GGUFS_COMMIT)
  set(GGUFS_CHANGELOG_ENTRY "Built from commit ${GGUFS_COMMIT}.")
  set(GGUFS_CHANGELOG_DATE "${GGUFS_COMMIT_DATE}")
else()
  set(GGUFS_CHANGELOG_ENTRY "Built from a source tree outside git.")
endif()
if(NOT GGUFS_CHANGELOG_DATE)
  string(TIMESTAMP GGUFS_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
set(changelog ${PROJECT_BINARY_DIR}/package/changelog)
configure_file(${CMAKE_CURRENT_LIST_DIR}/changelog.in ${changelog} @ONLY)
add_custom_command(OUTPUT ${changelog}.gz
                   COMMAND gzip -9nkf ${changelog}
                   DEPENDS ${changelog}
                   COMMENT "Compressing the package's changelog" VERBATIM)
add_custom_target(ggufs-changelog ALL DEPENDS ${changelog}.gz)
include(GNUInstallDirs)
install(FILES ${changelog}.gz DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT ggufs)

include(CPack)
