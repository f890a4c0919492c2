#!/usr/bin/env python3
"""Generates native/src/ops/math_coeffs.inc: constants and polynomials of the GLSL math library.

Run: python3 native/tools/math_coeffs.py > native/src/ops/math_coeffs.inc   (needs mpmath)
Taylor coefficients where a series converges fast enough; Chebyshev fits (mpmath.chebyfit,
near-minimax) elsewhere. Each polynomial is emitted twice: with the terms double needs and with
the (fewer) terms float needs. Split constants (Cody-Waite, hi/lo pairs) are derived here too.
"""
import mpmath as mp

mp.mp.dps = 60
pi = mp.pi


def rnd(v, bits):
    with mp.workprec(bits):
        return +mp.mpf(v)


def lit(v, dbl):
    if v == 0:
        return "0.0lf" if dbl else "0.0"
    s = mp.nstr(mp.mpf(v), 21 if dbl else 12, min_fixed=-1, max_fixed=-1)
    if "e" not in s and "." not in s:
        s += ".0"
    return s + ("lf" if dbl else "")


def hilo(v, bits):
    h = rnd(v, bits)
    return h, rnd(v - h, bits)


def horner(name, coeffs, dbl):
    t = "double" if dbl else "float"
    sfx = "" if dbl else "_f32"
    expr = lit(coeffs[-1], dbl)
    for c in reversed(coeffs[:-1]):
        expr = "%s + z * (%s)" % (lit(c, dbl), expr)
    # Horner written out as one precise expression: no contraction, fixed order.
    return "%s %s%s(%s z) { precise %s r = %s; return r; }\n" % (t, name, sfx, t, t, expr)


def horner_fma(name, coeffs):
    # One fma per term (fused or not: the fast paths' error bounds allow either), double only; one
    # statement each (glslang rejects fma calls nested twenty deep).
    body = "  double p = %s;\n" % lit(coeffs[-1], True)
    for c in reversed(coeffs[:-1]):
        body += "  p = fma(p, z, %s);\n" % lit(c, True)
    return "double %s(double z) {\n%s  return p;\n}\n" % (name, body)
def horner_fma_f32(name, coeffs):
    # As horner_fma, in f32 (the fast mode's error bounds allow a fused fma or not).
    body = "  float p = %s;\n" % lit(coeffs[-1], False)
    for c in reversed(coeffs[:-1]):
        body += "  p = fma(p, z, %s);\n" % lit(c, False)
    return "float %s(float z) {\n%s  return p;\n}\n" % (name, body)
def horner_dd_f64(name, coeffs):
    # f64: c0 as hi + lo and the last step in dd (TwoSum inlined): the leading term's rounding would
    # otherwise cost up to half an ulp before the caller's own rounding. (f32: horner_dd2_f32.)
    h, l = hilo(coeffs[0], 53)
    expr = lit(coeffs[-1], True)
    for c in reversed(coeffs[1:-1]):
        expr = "%s + z * (%s)" % (lit(c, True), expr)
    return ("double %s_dd(double z, out double lo) {\n"
            "  precise double p = z * (%s);\n"
            "  precise double s = %s + p;\n"
            "  precise double bb = s - %s;\n"
            "  precise double e = ((%s - (s - bb)) + (p - bb)) + %s;\n"
            "  lo = e;\n  return s;\n}\n") % (name, expr, lit(h, True), lit(h, True), lit(h, True), lit(l, True))

def f32(v):
    with mp.workprec(24):
        return +mp.mpf(v)


def horner_dd2_f32(name, coeffs):
    # f32: c0 + z (c1 + z R(z)) with c0 and c1 as hi + lo and both last steps in dd (TwoSum and
    # Dekker's product inlined: the library's helpers come after these). With only c0 in dd the
    # f32 rounding errors of z (c1 + ...), up to a third of the value at |z| = 1 (erfc's [2, 4)
    # piece), reached 1.15 ulp of erfc on f32-only devices.
    h0, l0 = hilo(coeffs[0], 24)
    h1, l1 = hilo(coeffs[1], 24)
    expr = lit(coeffs[-1], False)
    for c in reversed(coeffs[2:-1]):
        expr = "%s + z * (%s)" % (lit(c, False), expr)
    L = lambda v: lit(v, False)
    return ("float %s_dd_f32(float z, out float lo) {\n"
            "  precise float u = z * (%s);\n"
            "  precise float v = %s + u;\n"
            "  precise float vb = v - %s;\n"
            "  precise float ve = ((%s - (v - vb)) + (u - vb)) + %s;\n"
            "  precise float zs = z * 4097.0, vs = v * 4097.0;\n"
            "  precise float zh = zs - (zs - z), vh = vs - (vs - v);\n"
            "  precise float zl = z - zh, vl = v - vh;\n"
            "  precise float w = z * v;\n"
            "  precise float we = ((((zh * vh - w) + zh * vl) + zl * vh) + zl * vl) + z * ve;\n"
            "  precise float s = %s + w;\n"
            "  precise float sb = s - %s;\n"
            "  precise float e = ((%s - (s - sb)) + (w - sb)) + (we + %s);\n"
            "  lo = e;\n  return s;\n}\n") % (name, expr, L(h1), L(h1), L(h1), L(l1), L(h0), L(h0), L(h0), L(l0))


def fit(f, a, b, n):
    c, err = mp.chebyfit(f, [a, b], n, error=True)
    return list(reversed(c)), err


polys = {}  # name -> (double coeffs, float coeffs)
fact = mp.factorial
polys["nx_poly_expq"] = ([1 / fact(j + 2) for j in range(12)], [1 / fact(j + 2) for j in range(7)])
# e^x - 1 = x + x^2/2 + x^3 expm1c(x) for |x| < 1/2, Taylor to x^15 (remainder 2^-60 there)
polys["nx_poly_expm1c"] = ([1 / fact(j + 3) for j in range(13)], [1 / fact(j + 3) for j in range(8)])
polys["nx_poly_log"] = ([mp.mpf(2) / (2 * n + 5) for n in range(11)], [mp.mpf(2) / (2 * n + 5) for n in range(7)])
polys["nx_poly_sin"] = ([(-1) ** (j + 1) / fact(2 * j + 3) for j in range(9)],
                        [(-1) ** (j + 1) / fact(2 * j + 3) for j in range(6)])
polys["nx_poly_cos"] = ([(-1) ** j / fact(2 * j + 4) for j in range(9)], [(-1) ** j / fact(2 * j + 4) for j in range(6)])
polys["nx_poly_sinh"] = ([1 / fact(2 * j + 3) for j in range(10)], [1 / fact(2 * j + 3) for j in range(7)])


def h_atan(z):
    if z == 0:
        return mp.mpf(-1) / 3
    s = mp.sqrt(z)
    return (mp.atan(s) - s) / (z * s)


def h_asin(z):
    if z == 0:
        return mp.mpf(1) / 6
    s = mp.sqrt(z)
    return (mp.asin(s) - s) / (z * s)


def h_erf(z):
    if z == 0:
        return 2 / mp.sqrt(pi) - 1
    s = mp.sqrt(z)
    return mp.erf(s) / s - 1


errs = []
def both(name, f, a, b, nd, nf):
    cd, ed = fit(f, a, b, nd)
    cf, ef = fit(f, a, b, nf)
    errs.append("%s: double %d terms abs err %s, float %d terms %s" % (name, nd, mp.nstr(ed, 3), nf, mp.nstr(ef, 3)))
    polys[name] = (cd, cf)


both("nx_poly_atan", h_atan, 0, mp.mpf(49) / 256, 13, 7)
both("nx_poly_asin", h_asin, 0, mp.mpf(1) / 4, 14, 7)
both("nx_poly_erf", h_erf, 0, 1, 15, 8)
G = lambda x: mp.erfc(x) * mp.exp(x * x)
# erfc(x) = exp(-x^2) G(x): pieces in t = x - centre, and the tail in u = 1/x as G(1/u)/u.
both("nx_poly_erfc0", lambda t: G(t + mp.mpf(0.75)), -0.25, 0.25, 17, 8)
both("nx_poly_erfc1", lambda t: G(t + mp.mpf(1.5)), -0.5, 0.5, 19, 9)
both("nx_poly_erfc2", lambda t: G(t + mp.mpf(3)), -1, 1, 22, 11)
both("nx_poly_erfc3", lambda u: G(1 / u) / u, mp.mpf(1) / 28, mp.mpf(1) / 4, 18, 9)

def erfinv_over_x_w(w):
    if w == 0:
        return mp.sqrt(pi) / 2
    x = mp.sqrt(-mp.expm1(-w))
    return mp.erfinv(x) / x


# erf_inv first guess (then refined by a Halley step on erf/erfc): erfinv(x)/x as a function of
# w = -log(1 - x^2), centred on [0, 6.25], and of v = sqrt(w) on [2.5, 6.1].
both("nx_poly_erfinv0", lambda t: erfinv_over_x_w(t + mp.mpf(3.125)), -3.125, 3.125, 16, 9)
both("nx_poly_erfinv1", lambda t: erfinv_over_x_w((t + mp.mpf(4.3)) ** 2), -1.8, 1.8, 14, 8)

# For the f32 results' plain-double fast paths (math_fast_f32.inc), double only, each with the
# fewest terms that keep its error at least 2^-3 inside the 2^-43 budget (the rounding test's
# window is 2^-40). One polynomial per function over the range typical inputs come from, so that
# a warp's lanes take one branch: erf a = a + a P(a^2) for a < 2 (relative, erf a / a >= erf 2 / 2);
# G = e^(a^2) erfc a in t = a - 3 on [2, 4) (relative to G's least value, the one at the right
# end), and from 4 to 10 (erfc's fast range) as G(1/u)/u in u = 1/a (below 2, 1 - erf);
# asin s = s + s z A(z), z = s^2 <= 1/4 (relative: z times A's error); atan q = q + q z T(z) for
# q <= 1 (relative: z q / atan q <= 4/pi times T's error) and, atan2's, for |q| <= 0.41533
# (relative: z q / atan q <= 0.182 times T's error); erf_inv x = x E(w - 3.125), w =
# -log(1 - x^2) <= 6.25 (relative to E's least value, sqrt(pi)/2); sin t = t + t z S(z) and
# cos t = 1 + z C(z) (z = t^2, |t| <= 0.786), relative to sin t >= 0.900 t and cos t >= 0.706.
fast_polys = {}
def fast(name, f, a, b, n, scale=1):
    c, e = fit(f, a, b, n)
    errs.append("%s: double %d terms abs err %s (2^%s of its least value)" % (name, n, mp.nstr(e, 3),
                                                                          mp.nstr(mp.log(e / scale, 2), 3)))
    fast_polys[name] = c
fast("nx_poly_erf_fast", h_erf, 0, 4, 16, mp.erf(2) / 2)
fast("nx_poly_erfc_fast2", lambda t: G(t + 3), -1, 1, 16, G(4))
fast("nx_poly_erfc_fast3", lambda u: G(1 / u) / u, mp.mpf("0.1"), mp.mpf("0.25"), 11, 4 * G(4))
fast("nx_poly_asin_fast", h_asin, 0, mp.mpf(1) / 4, 11, 4)
fast("nx_poly_atan_fast", h_atan, 0, 1, 17, pi / 4)
Z8 = mp.mpf("0.1725")  # q^2 for |q| <= 0.41533, a little past tan(pi/8) = 0.41421 (atan2's thirds)
fast("nx_poly_atan3_fast", h_atan, 0, Z8, 9, mp.atan(mp.sqrt(Z8)) / (mp.sqrt(Z8) * Z8))
fast("nx_poly_erfinv_fast", lambda t: erfinv_over_x_w(t + mp.mpf(3.125)), -3.125, 3.125, 21, mp.sqrt(pi) / 2)
T2 = mp.mpf("0.786") ** 2
h_sin = lambda z: (mp.sin(mp.sqrt(z)) / mp.sqrt(z) - 1) / z if z != 0 else mp.mpf(-1) / 6
h_cos = lambda z: (mp.cos(mp.sqrt(z)) - 1) / z if z != 0 else mp.mpf(-1) / 2
fast("nx_poly_sin_fast", h_sin, 0, T2, 6, mp.mpf("0.900") / T2)
fast("nx_poly_cos_fast", h_cos, 0, T2, 6, mp.mpf("0.706") / T2)

# For the fast f32 math mode (NX_VULKAN_F32_MATH=fast, math_ulp1_f32.inc): f32 coefficients,
# evaluated in f32 by fma. Each has the fewest terms whose error, coefficients rounded to f32,
# stays near 2^-26 of the function's value (its share of the 1-ulp budget; the rounding of f32
# coefficients stops most fits from going much lower): atan q = q + q z T(z), z = q^2 <= 1;
# asin s = s + s z A(z), z = s^2 <= 1/4; tan t = t + t z N(z), z = t^2 <= (pi/4)^2; tanh a =
# a + a z H(z), z = a^2 <= 0.625^2; and log's below.
ulp1_polys = {}
def ulp1_err(f, a, b, c):
    # The fit's largest error with its coefficients as emitted (ascending), over 401 points:
    # chebyfit's own estimate misreads functions with a removable singularity (expm1's: 0.5).
    return max(abs(mp.polyval(list(reversed(c)), x) - f(x)) for x in mp.linspace(a, b, 401))


def ulp1(name, f, a, b, n):
    c = [f32(v) for v in fit(f, a, b, n)[0]]
    errs.append("%s: float %d terms abs err %s" % (name, n, mp.nstr(ulp1_err(f, a, b, c), 3)))
    ulp1_polys[name] = c
h_tan = lambda z: (mp.tan(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)) if z != 0 else mp.mpf(1) / 3
ulp1("nx_poly_atan_ulp1", h_atan, 0, 1, 10)
ulp1("nx_poly_asin_ulp1", h_asin, 0, mp.mpf(1) / 4, 6)
ulp1("nx_poly_tan_ulp1", h_tan, 0, (pi / 4) ** 2, 7)
h_tanh = lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)) if z != 0 else mp.mpf(-1) / 3
# sin t = t + t z S(z), cos t = 1 - z/2 + z^2 C(z), z = t^2 <= 0.786^2 (within 2^-28 and 2^-30).
h_sin_u = lambda z: (mp.sin(mp.sqrt(z)) / mp.sqrt(z) - 1) / z if z != 0 else mp.mpf(-1) / 6
h_cos_u = lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / (z * z) if z != 0 else mp.mpf(1) / 24
ulp1("nx_poly_sin_ulp1", h_sin_u, 0, mp.mpf("0.786") ** 2, 4)
ulp1("nx_poly_cos_ulp1", h_cos_u, 0, mp.mpf("0.786") ** 2, 3)
# expm1 r = r + r^2 M(r) for |r| < 0.35 (within 2^-28.9 of it).
h_expm1 = lambda r: (mp.expm1(r) - r) / (r * r) if r != 0 else mp.mpf(1) / 2
ulp1("nx_poly_expm1_ulp1", h_expm1, mp.mpf("-0.35"), mp.mpf("0.35"), 6)
# log m = 2 atanh s = 2s + s z L(z), s = (m - 1) / (m + 1), |s| <= (sqrt 2 - 1) / (sqrt 2 + 1).
h_log2 = lambda z: (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)) / (z * mp.sqrt(z)) if z != 0 else mp.mpf(2) / 3
ulp1("nx_poly_log_ulp1", h_log2, 0, ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2, 4)
# pow's log m = 2s + (2/3) s^3 + s^5 L5(z), the first two terms as double-floats (nx_log_pow_ulp1).
h_log5 = lambda z: ((2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z) - 2 * z * mp.sqrt(z) / 3) / (z * z * mp.sqrt(z))
                    if z != 0 else mp.mpf(2) / 5)
ulp1("nx_poly_log5_ulp1", h_log5, 0, ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2, 4)
# cbrt f = C(t), t = f - 1.5 for f in [1, 2): the start of cbrt's Newton step, which squares its
# relative error.
ulp1("nx_poly_cbrt_ulp1", lambda t: mp.cbrt(t + mp.mpf("1.5")), mp.mpf("-0.5"), mp.mpf("0.5"), 5)
G_erfc = lambda x: mp.erfc(x) * mp.exp(x * x)

# Piece tables (erf, erfc and erf_inv in the fast f32 math mode): a lane looks its piece up in
# shared memory instead of branching to it, so a warp whose lanes fall in several pieces runs one
# polynomial. Each piece is 12 f32 words, centre, c0 high, c0 low, q0..q8 (zeros past the
# piece's terms), for c0 + t Q(t) with t = the argument - centre; every piece of a table has nq
# terms in Q. The reported error is the largest over the pieces, relative to the least value of
# what each approximates.
piece_tables = {}
def rounded_fit(g, a, b, n):
    # Coefficients c0..c_{n-1} for f32: each rounded in turn (c0 to 48 bits, as two floats), the
    # later ones refitted by least squares on 4n Chebyshev nodes to what the rounded ones leave.
    # Rounding a Chebyshev fit's coefficients all at once can cost 2^-25 where this costs 2^-29.
    m = 4 * n
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(pi * (k + mp.mpf(1) / 2) / m) for k in range(m)]
    ys = [g(x) for x in xs]
    fixed = []
    for i in range(n):
        A = mp.matrix([[x ** (i + j) for j in range(n - i)] for x in xs])
        r = mp.matrix([y - mp.polyval(list(reversed(fixed)), x) if fixed else y for x, y in zip(xs, ys)])
        c = mp.qr_solve(A, r)[0][0]
        fixed.append(sum(hilo(c, 24)) if i == 0 else f32(c))
    return fixed
def pieces(name, items, nq):
    words, worst = [], mp.mpf(0)
    for f, lo, hi, ctr in items:
        g = lambda t, f=f, ctr=ctr: f(t + ctr)
        c = rounded_fit(g, lo - ctr, hi - ctr, nq + 1)
        h, l = hilo(c[0], 24)
        q = c[1:]
        least = min(abs(f(lo)), abs(f(hi)))
        worst = max(worst, ulp1_err(g, lo - ctr, hi - ctr, [h + l] + q) / least)
        words += [f32(ctr), h, l] + q + [mp.mpf(0)] * (9 - nq)
    errs.append("%s: %d pieces, float c0 (in two) + %d terms, error 2^%s of the least value" %
                (name, len(items), nq, mp.nstr(mp.log(worst, 2), 3)))
    piece_tables[name] = words
# erf a for a < 4: a (c0 + z Q(z)), z = a^2, below 1/2; then erf itself in t = a - centre on
# [0.5, 1), [1, 1.5), ... [3.5, 4) (piece floor(2a)).
h_erf_over_a = lambda z: mp.erf(mp.sqrt(z)) / mp.sqrt(z) if z != 0 else 2 / mp.sqrt(pi)
erf_pieces = [(h_erf_over_a, 0, mp.mpf(1) / 4, 0)] + [(mp.erf, mp.mpf(k) / 2, mp.mpf(k + 1) / 2, mp.mpf(2 * k + 1) / 4)
                                                      for k in range(1, 8)]
pieces("kErfPiecesUlp1", erf_pieces, 7)
def halves(f, k0, k1):
    # Pieces [1, 1.5) 2^k and [1.5, 2) 2^k for k = k0 .. k1, centred.
    return [(f, lo * mp.mpf(2) ** k, (lo + mp.mpf(1) / 2) * mp.mpf(2) ** k, (lo + mp.mpf(1) / 4) * mp.mpf(2) ** k)
            for k in range(k0, k1 + 1) for lo in (1, mp.mpf("1.5"))]
# erfc x: for x < 1/2 1 -+ erf |x| by erf's pieces; on [0.5, 8) e^-x^2 G(x), G = e^(x^2) erfc x in
# halves of binades [0.5, 0.75), [0.75, 1), [1, 1.5) .. [6, 8) (t Q(t) at most 0.2 of G). The two
# sets interleave, erf's piece k at 2k and G's at 2k + 1: a warp's lanes on (-2, 2) read 8 pieces
# in 8 different shared-memory bank groups (a piece is 12 words: 3 j mod 8 differs for 8 j in a row).
pieces("kErfcPiecesUlp1", [p for pair in zip(erf_pieces, halves(G_erfc, -1, 2)) for p in pair], 8)
# erf_inv x = x E(u), u = 1 - x^2 >= 2^-23, E = erfinv(x) / x: pieces by u's binade 2^e and the top
# bit of its significand, u 2^-e in [1, 1.5) or [1.5, 2] (centre 1.25 or 1.75): piece
# 2 (-1 - e) + (1 - top bit) for e = -1 .. -23, 46 pieces, t = u 2^-e - centre in [-1/4, 1/4].
def erfinv_over_x_u(u):
    z = 1 - u
    return mp.sqrt(pi) / 2 if z == 0 else mp.erfinv(mp.sqrt(z)) / mp.sqrt(z)
# The first piece is centred on u = 1 (t = 0 at x = 0), so small x meet its c0 alone.
pieces("kErfInvPiecesUlp1",
       [(lambda m, s=mp.mpf(2) ** e: erfinv_over_x_u(m * s), lo, lo + mp.mpf(1) / 2,
         2 if e == -1 and lo == mp.mpf("1.5") else lo + mp.mpf(1) / 4)
        for e in range(-1, -24, -1) for lo in (mp.mpf("1.5"), mp.mpf(1))], 7)

# tanh a for a < 9: a (c0 + z Q(z)), z = a^2, below 1/2, then halves of binades for k = -1 .. 2
# and [8, 9) (piece 1 + (bits(a) - bits(1/2)) >> 22).
h_tanh_over_a = lambda z: mp.tanh(mp.sqrt(z)) / mp.sqrt(z) if z != 0 else mp.mpf(1)
pieces("kTanhPiecesUlp1", [(h_tanh_over_a, 0, mp.mpf(1) / 4, 0)] + halves(mp.tanh, -1, 2) +
       [(mp.tanh, 8, 9, mp.mpf(17) / 2)], 7)
# sigmoid x for x in [-4, 20): 1/2 + x (c0 + z Q(z)), z = x^2, for |x| < 1/2; halves of binades
# of x on [0.5, 16) and [16, 20) (pieces 1 .. 11); sigmoid itself in pieces of 1/8 on (-4, -0.5]
# (12 + floor(8 (|x| - 1/2)): relative to a result that falls by e^-1/8 across one).
h_sigmoid_odd = lambda z: mp.tanh(mp.sqrt(z) / 2) / (2 * mp.sqrt(z)) if z != 0 else mp.mpf(1) / 4
h_sigmoid = lambda x: 1 / (1 + mp.exp(-x))
pieces("kSigmoidPiecesUlp1", [(h_sigmoid_odd, 0, mp.mpf(1) / 4, 0)] + halves(h_sigmoid, -1, 3) +
       [(h_sigmoid, 16, 20, 18)] +
       [(lambda a: h_sigmoid(-a), mp.mpf(1) / 2 + mp.mpf(i) / 8, mp.mpf(1) / 2 + mp.mpf(i + 1) / 8,
         mp.mpf(1) / 2 + (2 * mp.mpf(i) + 1) / 16) for i in range(28)], 7)
# sinh a for a < 4: a (c0 + z Q(z)), z = a^2, below 1/2, then sinh itself in pieces of 1/8
# (1 + floor(8 (a - 1/2)); relative: it grows by up to e^1/8 across one). cosh a for a < 4 in
# pieces of 1/8 (floor(8a)).
h_sinh_over_a = lambda z: mp.sinh(mp.sqrt(z)) / mp.sqrt(z) if z != 0 else mp.mpf(1)
eighths = lambda f, lo, n: [(f, lo + mp.mpf(i) / 8, lo + mp.mpf(i + 1) / 8, lo + (2 * mp.mpf(i) + 1) / 16) for i in range(n)]
pieces("kSinhPiecesUlp1", [(h_sinh_over_a, 0, mp.mpf(1) / 4, 0)] + eighths(mp.sinh, mp.mpf(1) / 2, 28), 5)
pieces("kCoshPiecesUlp1", eighths(mp.cosh, 0, 32), 5)
# asinh a for a < 4096: a (c0 + z Q(z)), z = a^2, below 1/2, then halves of binades, [1, 1.5) 2^k
# and [1.5, 2) 2^k for k = -1 .. 11 (piece 1 + (bits(a) - bits(1/2)) >> 22).
h_asinh_over_a = lambda z: mp.asinh(mp.sqrt(z)) / mp.sqrt(z) if z != 0 else mp.mpf(1)
pieces("kAsinhPiecesUlp1", [(h_asinh_over_a, 0, mp.mpf(1) / 4, 0)] + halves(mp.asinh, -1, 11), 7)
# atanh a: a (c0 + z Q(z)), z = a^2, below 1/2; from 1/2 on in u = 1 - a (exact) by its halves of
# binades as erf_inv's (u 2^-e in [1.5, 2] or [1, 1.5), e = -2 .. -24; piece 1 + 2 (-2 - e) + (1 - top bit)).
h_atanh_over_a = lambda z: mp.atanh(mp.sqrt(z)) / mp.sqrt(z) if z != 0 else mp.mpf(1)
pieces("kAtanhPiecesUlp1", [(h_atanh_over_a, 0, mp.mpf(1) / 4, 0)] +
       [(lambda m, s=mp.mpf(2) ** e: mp.atanh(1 - m * s), lo, lo + mp.mpf(1) / 2, lo + mp.mpf(1) / 4)
        for e in range(-2, -25, -1) for lo in (mp.mpf("1.5"), mp.mpf(1))], 7)
# acosh x = sqrt(2u) S(u), u = x - 1 (exact for x in [1, 2^24)), S = acosh(1 + u) / sqrt(2u): below
# 1/2 in t = u, then halves of binades of u as asinh's (k = -1 .. 11).
h_acosh_s = lambda u: mp.acosh(1 + u) / mp.sqrt(2 * u) if u != 0 else mp.mpf(1)
pieces("kAcoshPiecesUlp1", [(h_acosh_s, 0, mp.mpf(1) / 2, 0)] + halves(h_acosh_s, -1, 11), 7)

DD = {"nx_poly_erf", "nx_poly_erfc0", "nx_poly_erfc1", "nx_poly_erfc2", "nx_poly_erfc3"}
consts = []
def const(name, vd, vf):
    consts.append((name, vd, vf))

for nm, v in [("PIO2", pi / 2), ("PI", pi), ("PIO4", pi / 4), ("ATAN05", mp.atan(0.5)), ("ATAN15", mp.atan(1.5)),
              ("LN2", mp.log(2)), ("TWO3", mp.mpf(2) / 3), ("TWOOSQRTPI", 2 / mp.sqrt(pi)), ("SQRTPIO2", mp.sqrt(pi) / 2)]:
    hd, ld = hilo(v, 53)
    hf, lf = hilo(v, 24)
    const(nm + "_H", hd, hf)
    const(nm + "_L", ld, lf)
# exp/log reduction: k * LN2HI exact (|k| < 2^12 double, < 2^8 float).
const("LN2HI", rnd(mp.log(2), 40), rnd(mp.log(2), 16))
const("LN2LO", rnd(mp.log(2) - rnd(mp.log(2), 40), 53), rnd(mp.log(2) - rnd(mp.log(2), 16), 24))
const("INVLN2", 1 / mp.log(2), 1 / mp.log(2))
const("INVPIO2", 2 / pi, 2 / pi)
# Cody-Waite pi/2: double 33 + 33 + 53 bits (k < 2^20); float 12 + 12 + 12 + 12 + 24 bits (k < 2^12).
rem = pi / 2
dparts = []
for bits in (33, 33, 53, 0, 0):
    p = rnd(rem, bits) if bits else mp.mpf(0)
    dparts.append(p)
    rem -= p
rem = pi / 2
fparts = []
for bits in (12, 12, 12, 12, 24):
    p = rnd(rem, bits)
    fparts.append(p)
    rem -= p
for i in range(5):
    const("CW%d" % (i + 1), dparts[i], fparts[i])

# 2/pi bits: word j holds bits 32j+1 .. 32j+32 of the fraction.
words = []
v = 2 / pi
with mp.workprec(1400):
    v = 2 / mp.pi
    for j in range(40):
        v *= 2 ** 32
        w = int(mp.floor(v))
        words.append(w)
        v -= w

print("// Generated by native/tools/math_coeffs.py: do not edit.")
for e in errs:
    print("// " + e)
print('constexpr const char* kMathCoeffsF64 = R"GLSL(')
for nm, vd, vf in consts:
    print("const double K_%s = %s;" % (nm, lit(vd, True)))
for nm, (cd, cf) in polys.items():
    print(horner(nm, cd, True), end="")
    if nm in DD:
        print(horner_dd_f64(nm, cd), end="")
for nm, cd in fast_polys.items():
    print(horner_fma(nm, cd), end="")
print(')GLSL";')
print('constexpr const char* kMathCoeffsF32 = R"GLSL(')
for nm, vd, vf in consts:
    print("const float K_%s_f32 = %s;" % (nm, lit(vf, False)))
for nm, (cd, cf) in polys.items():
    print(horner(nm, cf, False), end="")
    if nm in DD:
        print(horner_dd2_f32(nm, cf), end="")
print(')GLSL";')
print('constexpr const char* kMathCoeffsUlp1F32 = R"GLSL(')
for nm, c in ulp1_polys.items():
    print(horner_fma_f32(nm, c), end="")
print(')GLSL";')
print('constexpr const char* kTwoOverPi = R"GLSL(')
print("const uint NX_TWO_OVER_PI[40] = uint[](" + ", ".join("0x%08xu" % w for w in words) + ");")
print(')GLSL";')

# exp for f32 results computed in f32 only (math_ff_f32.inc): x = k ln2/64 + r with k ln2/64 in
# three parts, L1 of 10 bits (k has at most 14, so k L1 is exact), L2 and L3 the f32 rests (k L2
# is taken exactly by nx_ff_two_prod), and the table 2^(j/64) as the nearest f32 and the f32 rest
# (relative error 2^-48).
def f32_bits(v):
    import struct
    return struct.unpack("<I", struct.pack("<f", float(v)))[0]


def print_table(name, words):
    print("constexpr uint32_t %s[%d] = {" % (name, len(words)))
    for i in range(0, len(words), 8):
        print("    " + ", ".join(words[i:i + 8]) + ",")
    print("};")


c64 = mp.log(2) / 64
L1 = rnd(c64, 10)
L2 = f32(c64 - L1)
L3 = f32(c64 - L1 - L2)
exp2_64 = []
for j in range(64):
    t = mp.mpf(2) ** (mp.mpf(j) / 64)
    hi = f32(t)
    exp2_64 += [hi, f32(t - hi)]
print('constexpr const char* kExpConstantsF32 = R"GLSL(')
print("const float K_EXP_INV_L = %r;  // 64 / ln2" % float(f32(1 / c64)))
for nm, v in (("L1", L1), ("L2", L2), ("L3", L3)):
    print("const float K_EXP_%s = %r;" % (nm, float(v)))
print(')GLSL";')
print("// 2^(j/64) for j = 0..63: (high, low) bits, the high part the nearest f32.")
words = ["0x%08xu" % f32_bits(v) for v in exp2_64]
print("constexpr uint32_t kExp2Table[128] = {")
for i in range(0, 128, 8):
    print("    " + ", ".join(words[i:i + 8]) + ",")
print("};")
for nm, words in piece_tables.items():
    print("// %s: %d pieces of 12 words (centre, c0 high, c0 low, q0..q8), f32 bits." % (nm, len(words) // 12))
    print_table(nm, ["0x%08xu" % f32_bits(v) for v in words])


# Doubles for the f32 results' plain-double fast paths (math_fast_f32.inc), each as (low word,
# high word) of the correctly rounded value.
def f64_words(v):
    import struct
    with mp.workprec(200):
        d = float(+mp.mpf(v))  # float() of a 200-bit value rounds to nearest
    lo, hi = struct.unpack("<II", struct.pack("<d", d))
    return ["0x%08xu" % lo, "0x%08xu" % hi]




print("// 2^(j/64) for j = 0..63 as doubles (low word, high word), correctly rounded.")
with mp.workprec(200):
    print_table("kExp2TableF64", sum((f64_words(mp.mpf(2) ** (mp.mpf(j) / 64)) for j in range(64)), []))

# log for f32 results in f32 only: m in [sqrt(1/2), sqrt(2)) by the cell j = (bits(m) >> 16) & 0xff
# (the lowest exponent bit and 7 mantissa bits), c the cell's midpoint, ic = 1/c to 12 bits (so
# m's 12-bit halves times ic are exact), L = -log(ic) as high and low f32; the two cells next to 1
# use ic = 1, L = 0 (then r = m - 1 exactly, and log x near 1 keeps its relative accuracy).
log_tab = []
for j in range(256):
    lo = (mp.mpf(1) + mp.mpf(j & 127) / 128) if j >> 7 else (mp.mpf(1) / 2 + mp.mpf(j & 127) / 256)
    width = mp.mpf(1) / 128 if j >> 7 else mp.mpf(1) / 256
    if j in (128, 127) or lo + width <= mp.sqrt(0.5) or lo >= mp.sqrt(2):
        log_tab.append((1, 0, 0))
        continue
    ic = rnd(1 / (lo + width / 2), 12)
    L = -mp.log(ic)
    Lhi = f32(L)
    log_tab.append((ic, Lhi, f32(L - Lhi)))
LN2_1 = rnd(mp.log(2), 16)
LN2_2 = rnd(mp.log(2) - LN2_1, 16)
LN2_3 = f32(mp.log(2) - LN2_1 - LN2_2)
print('constexpr const char* kLogConstantsF32 = R"GLSL(')
print("// ln 2 in three parts, the first two of 16 bits (their products with an exponent are exact).")
for nm, v in (("LN2_1", LN2_1), ("LN2_2", LN2_2), ("LN2_3", LN2_3)):
    print("const float K_LOG_%s = %r;" % (nm, float(v)))
print(')GLSL";')
print("// Per cell: 1/c to 12 bits, -log of it as high and low parts (bits), and a zero word.")
words = []
for ic, h, l in log_tab:
    words += ["0x%08xu" % f32_bits(v) for v in (ic, h, l)] + ["0x00000000u"]
print("constexpr uint32_t kLogTable[1024] = {")
for i in range(0, 1024, 8):
    print("    " + ", ".join(words[i:i + 8]) + ",")
print("};")

print("// Cells 53..181 of kLogTable (those m in [sqrt(1/2), sqrt(2)) falls in) as doubles: c (its 1/c")
print("// to 12 bits) and -log c correctly rounded, each as (low word, high word).")
with mp.workprec(200):
    print_table("kLogTableF64", sum((f64_words(log_tab[j][0]) + f64_words(-mp.log(log_tab[j][0]) if log_tab[j][0] != 1 else 0)
                                     for j in range(53, 182)), []))
