"""ft_dependencies(): the external repositories ft needs, for ft itself and for a consumer.

A workspace that uses ft (see examples/consumer/) writes:

    local_repository(name = "ft", path = "/path/to/ft")   # or http_archive when online
    load("@ft//:deps.bzl", "ft_dependencies")
    ft_dependencies()

and puts `build --cxxopt=-std=c++20 --host_cxxopt=-std=c++20` in its .bazelrc (ft is C++20).
Everything is offline: each repository is either a stand-in generated from ft's own
third_party/ directory or a Debian system package:

  rules_cc, rules_java, remote_coverage_tools  Bazel 4 asks for these and would download
      them; ft's stand-ins (third_party/<name>/) forward to Bazel's native rules.
  platforms  Debian's bazel-platforms package (/usr/share/bazel/tools/platforms).
  eigen      Debian's libeigen3-dev headers (/usr/include/eigen3), as @eigen//:eigen.

Abseil, GoogleTest and Google Benchmark are system libraries that ft's //third_party
targets link by flag, so they need no repository.

Each repository is declared only if the workspace has not declared one of that name, so a
consumer that brings its own (an `eigen` of its choice, the real rules_cc) keeps it; a
consumer's own `eigen` must provide the target `@eigen//:eigen`.
"""

def _stand_in_impl(repository_ctx):
    # The stand-in's files live in ft's tree, next to the BUILD file of //third_party;
    # Label() here resolves inside ft's repository, whatever name the consumer gave it.
    third_party = repository_ctx.path(Label("//third_party:BUILD")).dirname
    source = third_party.get_child(repository_ctx.attr.directory)
    for child in source.readdir():
        repository_ctx.symlink(child, child.basename)

_stand_in = repository_rule(
    implementation = _stand_in_impl,
    attrs = {"directory": attr.string(mandatory = True)},
    local = True,
)

def _declare(name, rule, **kwargs):
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def ft_dependencies():
    """Declares every repository ft needs that the workspace has not declared yet."""
    for stand_in in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        _declare(stand_in, _stand_in, directory = stand_in)
    _declare(
        "platforms",
        native.local_repository,
        path = "/usr/share/bazel/tools/platforms",
    )
    _declare(
        "eigen",
        native.new_local_repository,
        build_file = str(Label("//third_party:eigen.BUILD")),
        path = "/usr/include/eigen3",
    )
