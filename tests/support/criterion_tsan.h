/* criterion_tsan.h - lets a Criterion test start under ThreadSanitizer.
 * Include it once, in the test's one source file (it defines a function).
 *
 * Criterion (through BoxFort) maps its shared arena at a random address
 * in [0x2000'0000'0000, 0x6000'0000'0000) with three tries, a range that
 * ThreadSanitizer mostly reserves for its shadow memory, so it fails to
 * start ("Could not initialize inheritable arena", Criterion issue #274).
 * BoxFort draws those addresses with rand_r: this one steers them into
 * TSan's middle application range (0x5500'0000'0000-0x5680'0000'0000),
 * a different 4 GiB slot on every call. Tests never call it. Without
 * ThreadSanitizer this header defines nothing. */
#ifndef PROF_TESTS_CRITERION_TSAN_H
#define PROF_TESTS_CRITERION_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define CRITERION_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CRITERION_TSAN 1
#endif
#endif

#ifdef CRITERION_TSAN
int rand_r(unsigned *seed)
{
    static int k;
    (void)seed;
    return 0x360000 + (k++ % 64) * 0x100;
}
#endif

#endif
