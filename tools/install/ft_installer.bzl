"""ft_installer: a program that installs ft's package into a prefix, from the Bazel graph.

`./bazelw run -c opt //:install -- PREFIX` runs it (//tools/install:install). The package:

  include/ft/...                  every header of ft's own tree that `deps` compile with, at
                                  its path in the tree ("tensor/tensor.h", "ft.h")
  lib/libft.a                     every ft archive of `deps`, merged (`ar -M`, ADDLIB)
  lib/libft.so                    libft.a linked whole into a shared library
  lib/cmake/ft/ftConfig.cmake     the imported targets ft::ft (libft.so) and ft::ft_static
  lib/cmake/ft/ftConfigVersion.cmake
  lib/pkgconfig/ft.pc             from ft.pc.in, @PREFIX@ filled in by the installer

Nothing in the CMake and pkg-config files is a copy of a BUILD file: the link flags are the
user_link_flags of every linker input of `deps` (the //third_party wrappers' -labsl_*, -ldnnl,
-lsleef, ...), the preprocessor defines are the compilation context's `defines` (Eigen's,
which //third_party:eigen hands to every dependent), and an include directory of an external
repository (@eigen) is where that repository's headers really are (/usr/include/eigen3),
found by following one of its headers' symlinks.

ft registers its ops and rules by explicit calls on first use (RegisterAllOps,
RegisterVmapRules), not in static initializers, and no ft library is alwayslink: a static
link of libft.a needs no --whole-archive.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _runfiles_path(ctx, f):
    """The path of `f` under a runfiles root (what the installer's manifest names)."""
    if f.short_path.startswith("../"):
        return f.short_path[3:]
    return ctx.workspace_name + "/" + f.short_path

def _unique(items):
    seen = {}
    out = []
    for item in items:
        if item not in seen:
            seen[item] = True
            out.append(item)
    return out

def _merge_archives(ctx, cc_toolchain, linker_inputs):
    """libft.a: every static archive of ft's own libraries (pic when there is one)."""
    archives = []
    for linker_input in linker_inputs:
        for library in linker_input.libraries:
            archive = library.pic_static_library or library.static_library
            if archive and archive.owner.workspace_name == ctx.label.workspace_name:
                archives.append(archive)
    archives = _unique(archives)
    if not archives:
        fail("%s: no static archive of ft in deps" % ctx.label)
    out = ctx.actions.declare_file("libft.a")

    # An MRI script rather than `ar x` and `ar rc`: ADDLIB copies members as they are, so two
    # objects with the same basename in different packages would stay two members where
    # extracting them into one directory would keep only the last.
    mri = ctx.actions.declare_file("libft.mri")
    ctx.actions.write(
        mri,
        "".join(
            ["CREATE %s\n" % out.path] +
            ["ADDLIB %s\n" % archive.path for archive in archives] +
            ["SAVE\n", "END\n"],
        ),
    )
    ctx.actions.run_shell(
        inputs = depset([mri] + archives, transitive = [cc_toolchain.all_files]),
        outputs = [out],
        command = 'rm -f "$2" && "$1" -M < "$3"',
        arguments = [cc_toolchain.ar_executable, out.path, mri.path],
        mnemonic = "FtMergeArchives",
        progress_message = "Merging %d ft archives into %s" % (len(archives), out.short_path),
    )
    return out, len(archives)

def _link_shared_library(ctx, cc_toolchain, archive, link_flags):
    """libft.so: libft.a linked whole (a linkshared cc_binary would keep only what is used,
    which for a library nothing calls yet is nothing), the system libraries as DT_NEEDED."""
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    whole = cc_common.create_library_to_link(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        pic_static_library = archive,
        alwayslink = True,
    )
    linking_context = cc_common.create_linking_context(
        linker_inputs = depset([cc_common.create_linker_input(
            owner = ctx.label,
            libraries = depset([whole]),
            user_link_flags = depset(link_flags),
        )]),
    )
    linking_outputs = cc_common.link(
        actions = ctx.actions,
        name = "ft",
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        linking_contexts = [linking_context],
        user_link_flags = ["-Wl,-soname,libft.so"],
        output_type = "dynamic_library",
    )
    return linking_outputs.library_to_link.resolved_symlink_dynamic_library

def _external_include_probes(ctx, compilation_context):
    """(include dir, a header under it) for each include dir of an external repository."""
    dirs = _unique(
        compilation_context.system_includes.to_list() +
        compilation_context.includes.to_list() +
        compilation_context.quote_includes.to_list(),
    )
    headers = compilation_context.headers.to_list()
    probes = []
    for include_dir in dirs:
        if not include_dir.startswith("external/"):
            continue  # ft's own tree, or a bazel-out directory of generated files
        for header in headers:
            if header.is_source and header.path.startswith(include_dir + "/"):
                probes.append((include_dir, header))
                break
    return probes

_CONFIG = """\
# ftConfig.cmake: ft {version}, installed by `bazel run //:install` (tools/install/).
# find_package(ft REQUIRED) gives two imported targets with the same interface:
#   ft::ft         the shared library lib/libft.so
#   ft::ft_static  the static library lib/libft.a (every ft package; no --whole-archive needed)
# Headers are included by their path in ft ("ft.h", "tensor/tensor.h") or as <ft/ft.h>.
# The link flags and defines below come from ft's Bazel graph, not from a copy of it.
get_filename_component(_ft_prefix "${{CMAKE_CURRENT_LIST_DIR}}/../../.." ABSOLUTE)

include(CMakeFindDependencyMacro)
find_dependency(Threads)  # ft's thread pool (cpu/parallel.h)

set(_ft_include_dirs "${{_ft_prefix}}/include;${{_ft_prefix}}/include/ft{cmake_includes}")

if(NOT TARGET ft::ft)
  add_library(ft::ft SHARED IMPORTED)
  set_target_properties(ft::ft PROPERTIES
    IMPORTED_LOCATION "${{_ft_prefix}}/lib/libft.so"
    IMPORTED_SONAME "libft.so"
{interface})
endif()

if(NOT TARGET ft::ft_static)
  add_library(ft::ft_static STATIC IMPORTED)
  set_target_properties(ft::ft_static PROPERTIES
    IMPORTED_LOCATION "${{_ft_prefix}}/lib/libft.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES CXX
{interface})
endif()

foreach(_ft_file IN ITEMS include/ft/ft.h lib/libft.so lib/libft.a)
  if(NOT EXISTS "${{_ft_prefix}}/${{_ft_file}}")
    set(ft_FOUND FALSE)
    set(ft_NOT_FOUND_MESSAGE "ft's package under ${{_ft_prefix}} lacks ${{_ft_file}}")
  endif()
endforeach()
unset(_ft_file)
unset(_ft_include_dirs)
unset(_ft_prefix)
"""

# The interface both of ftConfig.cmake's targets have (a CMake list variable would split the
# ;-lists inside it).
_CONFIG_INTERFACE = """\
    INTERFACE_INCLUDE_DIRECTORIES "${{_ft_include_dirs}}"
    INTERFACE_COMPILE_DEFINITIONS "{cmake_defines}"
    INTERFACE_COMPILE_FEATURES cxx_std_20
    INTERFACE_LINK_LIBRARIES "{cmake_link_flags}Threads::Threads\""""

# A version file like CMake's write_basic_package_version_file(... SameMajorVersion).
_CONFIG_VERSION = """\
# ftConfigVersion.cmake: ft {version}. A request is met by the same major version, at least
# as new (0.x: the same minor version too), or by any version when it names none; a 64-bit
# build only.
set(PACKAGE_VERSION "{version}")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
if(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_FIND_VERSION VERSION_LESS_EQUAL PACKAGE_VERSION
   AND PACKAGE_FIND_VERSION_MAJOR EQUAL {major}
   AND ({major} GREATER 0 OR PACKAGE_FIND_VERSION_MINOR EQUAL {minor}))
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
if(NOT CMAKE_SIZEOF_VOID_P STREQUAL "8")
  set(PACKAGE_VERSION "{version} (64-bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
"""

_PC = """\
# ft.pc: ft {version}, installed by `bazel run //:install` (tools/install/). ft is C++20:
# compile with -std=c++20 (or later). Libs links the shared library; for the static one,
# pass ${{libdir}}/libft.a in place of -lft (no --whole-archive needed).
prefix=@PREFIX@
includedir=${{prefix}}/include
libdir=${{prefix}}/lib

Name: ft
Description: composable function transforms (vmap, grad, jvp, jit) in C++
Version: {version}
Cflags: -I${{includedir}} -I${{includedir}}/ft{pc_cflags}
Libs: -L${{libdir}} -lft{pc_libs}
"""

def _ft_installer_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    cc_info = cc_common.merge_cc_infos(cc_infos = [dep[CcInfo] for dep in ctx.attr.deps])
    compilation_context = cc_info.compilation_context
    linker_inputs = cc_info.linking_context.linker_inputs.to_list()

    headers = [
        h
        for h in compilation_context.headers.to_list()
        if h.owner.workspace_name == ctx.label.workspace_name
    ]
    archive, archive_count = _merge_archives(ctx, cc_toolchain, linker_inputs)
    link_flags = _unique([
        flag
        for linker_input in linker_inputs
        for flag in linker_input.user_link_flags
    ])
    defines = compilation_context.defines.to_list()
    probes = _external_include_probes(ctx, compilation_context)

    version = ctx.attr.version
    major, minor = version.split(".")[0:2]
    fields = dict(
        version = version,
        major = major,
        minor = minor,
        cmake_defines = ";".join(defines),
        cmake_link_flags = "".join([flag + ";" for flag in link_flags]),
        pc_libs = "".join([" " + flag for flag in link_flags]),
        # Filled in by the action below, once the external include dirs are resolved.
        cmake_includes = "@CMAKE_INCLUDES@",
        pc_cflags = "@PC_INCLUDES@" + "".join([" -D" + define for define in defines]),
    )
    fields["interface"] = _CONFIG_INTERFACE.format(**fields)
    outputs = {}
    for name, template in [
        ("ftConfig.cmake", _CONFIG),
        ("ftConfigVersion.cmake", _CONFIG_VERSION),
        ("ft.pc.in", _PC),
    ]:
        unresolved = ctx.actions.declare_file(name + ".unresolved")
        ctx.actions.write(unresolved, template.format(**fields))
        outputs[name] = ctx.actions.declare_file(name)

        # readlink -f through the execroot's symlinks into the repository's real directory.
        # Not cached remotely: the answer depends on this machine's file system, not on the
        # inputs' contents.
        ctx.actions.run_shell(
            inputs = [unresolved] + [header for _, header in probes],
            outputs = [outputs[name]],
            command = """
set -eu
out=$1 in=$2
shift 2
cmake_includes= pc_includes=
while [ $# -gt 0 ]; do
  real=$(readlink -f "$2")
  dir=${real%/${2#$1/}}
  cmake_includes="$cmake_includes;$dir"
  pc_includes="$pc_includes -I$dir"
  shift 2
done
sed -e "s|@CMAKE_INCLUDES@|$cmake_includes|" -e "s|@PC_INCLUDES@|$pc_includes|" "$in" > "$out"
""",
            arguments = [outputs[name].path, unresolved.path] + [
                item
                for include_dir, header in probes
                for item in [include_dir, header.path]
            ],
            execution_requirements = {"no-remote-cache": "1"},
            mnemonic = "FtPackageConfig",
            progress_message = "Writing %s" % outputs[name].short_path,
        )

    shared_library = _link_shared_library(ctx, cc_toolchain, archive, link_flags)

    # The installer's manifest: one line per file, "mode<TAB>destination<TAB>source", the
    # source a path under the runfiles root.
    entries = [("0644", "include/ft/" + h.short_path, h) for h in headers]
    entries += [
        ("0755", "lib/libft.so", shared_library),
        ("0644", "lib/libft.a", archive),
        ("0644", "lib/cmake/ft/ftConfig.cmake", outputs["ftConfig.cmake"]),
        ("0644", "lib/cmake/ft/ftConfigVersion.cmake", outputs["ftConfigVersion.cmake"]),
        ("0644", "lib/pkgconfig/ft.pc", outputs["ft.pc.in"]),
    ]
    manifest = ctx.actions.declare_file(ctx.label.name + ".manifest")
    ctx.actions.write(
        manifest,
        "# ft %s: %d headers, %d archives merged into libft.a\n" % (
            version,
            len(headers),
            archive_count,
        ) + "".join([
            "%s\t%s\t%s\n" % (mode, dest, _runfiles_path(ctx, src))
            for mode, dest, src in entries
        ]),
    )
    installer = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.expand_template(
        template = ctx.file._template,
        output = installer,
        substitutions = {
            "@FT_MANIFEST@": _runfiles_path(ctx, manifest),
            "@FT_VERSION@": version,
        },
        is_executable = True,
    )
    files = [manifest, archive, shared_library] + outputs.values()
    return [DefaultInfo(
        executable = installer,
        files = depset([installer] + files),
        runfiles = ctx.runfiles(files = files + headers),
    )]

ft_installer = rule(
    implementation = _ft_installer_impl,
    doc = "A program that copies ft's package into the prefix it is given (install.sh).",
    executable = True,
    attrs = {
        "deps": attr.label_list(
            doc = "The cc_library targets the package holds (headers, archives, flags).",
            providers = [CcInfo],
            mandatory = True,
        ),
        "version": attr.string(doc = "ft's version, MAJOR.MINOR.PATCH.", mandatory = True),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
        "_template": attr.label(
            default = Label("//tools/install:install.sh"),
            allow_single_file = True,
        ),
    },
    fragments = ["cpp"],
)
