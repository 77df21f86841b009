// check.h: the consumer's own tiny check helper (a project using ft brings its own test
// framework; these programs need none). CHECK_NEAR prints the failing expression and makes
// the program exit 1 at the end, so one run reports every failed check.
#ifndef CONSUMER_CHECK_H_
#define CONSUMER_CHECK_H_

#include <cmath>
#include <cstdio>

inline int g_failures = 0;

#define CHECK_NEAR(actual, expected, tol)                                                \
  do {                                                                                    \
    const double a_ = (actual), e_ = (expected);                                          \
    if (!(std::fabs(a_ - e_) <= (tol))) {                                                 \
      std::fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g\n", __FILE__, __LINE__,     \
                   #actual, a_, e_);                                                      \
      ++g_failures;                                                                       \
    }                                                                                     \
  } while (0)

#define CHECK_TRUE(cond)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: %s is false\n", __FILE__, __LINE__, #cond);            \
      ++g_failures;                                                                       \
    }                                                                                     \
  } while (0)

inline int Finish(const char* name) {
  std::printf("%s: %s\n", name, g_failures == 0 ? "ok" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}

#endif  // CONSUMER_CHECK_H_
