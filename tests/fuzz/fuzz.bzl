"""ft_fuzz_target: a libFuzzer target and the test that replays its seed corpus."""

load("//:copts.bzl", "FT_TEST_COPTS")

def ft_fuzz_target(name, srcs, deps, testonly = False):
    """Defines the fuzz target `name` and `name`_corpus_test.

    `name` is a cc_binary: under --config=fuzz (the :fuzzing config_setting) libFuzzer's main
    drives it; elsewhere replay_main.cc does, so `bazel run` replays the files it is given.
    `name`_corpus_test replays every file of corpus/`name`/ in every config.

    Args:
      name: the target's name; its seed corpus is corpus/<name>/.
      srcs: the source defining LLVMFuzzerTestOneInput.
      deps: what srcs use.
      testonly: whether deps are testonly.
    """
    native.cc_library(
        name = name + "_lib",
        testonly = testonly,
        srcs = srcs,
        copts = FT_TEST_COPTS,
        deps = deps,
        alwayslink = True,
    )
    native.cc_binary(
        name = name,
        testonly = testonly,
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = [":" + name + "_lib"] + select({
            ":fuzzing": [],
            "//conditions:default": [":replay_main"],
        }),
    )
    native.cc_test(
        name = name + "_corpus_test",
        size = "small",
        args = [native.package_name() + "/corpus/" + name],
        data = native.glob(["corpus/" + name + "/*"]),
        deps = [
            ":" + name + "_lib",
            ":replay_main",
        ],
    )
