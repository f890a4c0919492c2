// unary, binary, select and clip against the CPU reference, for every supported type, broadcast
// shapes, mixed input types, and a device without f64/int64.
#include <bit>
#include <cmath>
#include <cstring>

#include "ops_elementwise_util.hpp"

namespace nxvk::test {
namespace {

class OpsElementwise : public DeviceTest {};

std::vector<UnaryOp> all_unary() {
  return {
#define NXVK_U(n) UnaryOp::n,
      NXVK_UNARY_OPS(NXVK_U)
#undef NXVK_U
  };
}
std::vector<BinaryOp> all_binary() {
  return {
#define NXVK_B(n) BinaryOp::n,
      NXVK_BINARY_OPS(NXVK_B)
#undef NXVK_B
  };
}

bool math_op(UnaryOp op) {
  switch (op) {
    case UnaryOp::abs: case UnaryOp::bitwise_not: case UnaryOp::ceil: case UnaryOp::conjugate: case UnaryOp::floor:
    case UnaryOp::negate: case UnaryOp::round: case UnaryOp::sign: case UnaryOp::count_leading_zeros:
    case UnaryOp::population_count: case UnaryOp::real: case UnaryOp::imag: case UnaryOp::is_nan:
    case UnaryOp::is_infinity: return false;
    default: return true;
  }
}
bool int_only(UnaryOp op) {
  return op == UnaryOp::bitwise_not || op == UnaryOp::count_leading_zeros || op == UnaryOp::population_count;
}
bool int_only(BinaryOp op) {
  return op == BinaryOp::quotient || op == BinaryOp::bitwise_and || op == BinaryOp::bitwise_or ||
         op == BinaryOp::bitwise_xor || op == BinaryOp::left_shift || op == BinaryOp::right_shift;
}
bool predicate(BinaryOp op) {
  return op == BinaryOp::equal || op == BinaryOp::not_equal || op == BinaryOp::greater || op == BinaryOp::less ||
         op == BinaryOp::greater_equal || op == BinaryOp::less_equal || op == BinaryOp::logical_and ||
         op == BinaryOp::logical_or || op == BinaryOp::logical_xor;
}

// Nx's output type: the merged type (comparisons u8, divide/atan2/pow of ints... as Nx gives).
DType merged(DType a, DType b) {
  const TypeInfo &x = type_info(a), &y = type_info(b);
  if (a == b) return a;
  if (x.is_float() || y.is_float()) {
    if (x.is_float() && y.is_float()) {
      if (a == DType::F64 || b == DType::F64) return DType::F64;
      if (a == DType::F32 || b == DType::F32) return DType::F32;
      return DType::F32;  // f16 with bf16
    }
    return x.is_float() ? a : b;
  }
  if (x.is_signed() == y.is_signed()) return x.bits >= y.bits ? a : b;
  const TypeInfo& s = x.is_signed() ? x : y;
  const TypeInfo& u = x.is_signed() ? y : x;
  uint32_t bits = std::min<uint32_t>(64, std::max(s.bits, u.bits * 2));
  return bits == 8 ? DType::S8 : bits == 16 ? DType::S16 : bits == 32 ? DType::S32 : DType::S64;
}
DType out_type_of(BinaryOp op, DType a, DType b) {
  if (predicate(op)) return DType::U8;
  DType m = merged(a, b);
  if ((op == BinaryOp::divide || op == BinaryOp::atan2) && !type_info(m).is_float()) return DType::F32;
  return m;
}
DType out_type_of(UnaryOp op, DType t) {
  if (op == UnaryOp::is_nan || op == UnaryOp::is_infinity) return DType::U8;
  if ((math_op(op) || op == UnaryOp::real || op == UnaryOp::imag) && !is_float_type(t)) return DType::F32;
  return t;
}

void check_unary(Device& dev, UnaryOp op, DType t, const Shape& s, std::mt19937& rng) {
  const size_t n = static_cast<size_t>(shape_size(s));
  const bool m = math_op(op);
  double lo = -4, hi = 4;
  if (op == UnaryOp::acosh) lo = 1;
  if (op == UnaryOp::log || op == UnaryOp::sqrt || op == UnaryOp::rsqrt) lo = 0.01;
  if (op == UnaryOp::acos || op == UnaryOp::asin || op == UnaryOp::atanh || op == UnaryOp::erf_inv) lo = -0.99, hi = 0.99;
  if (op == UnaryOp::log1p) lo = -0.9;
  ref::Bytes in = m ? random_data(t, n, rng, true, lo, hi) : random_data(t, n, rng);
  if (m)  // plumbing of the math library: finite inputs in the function's domain
    for (size_t i = 0; i < n; ++i) {
      double v = ref::read_value(t, in, i).f;
      if (is_float_type(t) && !(v >= lo && v <= hi)) ref::write_value(t, ref::Value{true, 0, (lo + hi) / 2}, in, i);
    }
  if (m && !is_float_type(t))
    for (size_t i = 0; i < n; ++i) ref::write_value(t, ref::Value{false, (__int128)(rng() % 3) + (lo > 0 ? 1 : 0), 0}, in, i);
  const DType out = out_type_of(op, t);
  poison_next(dev, n * type_bytes(out));
  Tensor y = unary(op, upload(dev, t, s, in), out);
  ASSERT_EQ(y.type, out);
  std::string diff = compare_bytes(out, to_binary(y), ref::unary(op, t, in, out), m ? 64 : 0);
  ASSERT_EQ(diff, "") << op_name(op) << " " << type_name(t) << " shape " << shape_string(s);
}

TEST_F(OpsElementwise, UnaryEveryOpAndType) {
  for (UnaryOp op : all_unary()) {
    if (op == UnaryOp::conjugate) continue;
    for (DType t : real_types()) {
      if (int_only(op) && is_float_type(t)) continue;
      // Math functions: every one on f32 and f64 (each kernel carries the math library, and
      // compiling hundreds is slow on lavapipe); the other types' conversions through exp only.
      if (math_op(op) && t != DType::F32 && t != DType::F64 && op != UnaryOp::exp) continue;
      for (const Shape& s : std::vector<Shape>{{}, {0}, {2, 1, 3}, {257}}) check_unary(device(), op, t, s, rng());
    }
  }
}

TEST_F(OpsElementwise, UnaryErrors) {
  Tensor f = constant(device(), DType::F32, {3}, Scalar::of_float(1));
  EXPECT_NXVK_ERROR(unary(UnaryOp::conjugate, f, DType::C64), ErrorKind::Unsupported, "conjugate", "complex types are not supported yet");
  EXPECT_NXVK_ERROR(unary(UnaryOp::population_count, f, DType::F32), ErrorKind::InvalidArgument, "population_count");
  EXPECT_NXVK_ERROR(unary(UnaryOp::exp, f, DType::S32), ErrorKind::InvalidArgument, "exp", "float");
}

void check_binary(Device& dev, BinaryOp op, DType ta, DType tb, const Shape& sa, const Shape& sb, const Shape& so,
                  std::mt19937& rng) {
  const bool math = op == BinaryOp::pow && is_float_type(out_type_of(op, ta, tb));
  const bool atan = op == BinaryOp::atan2;
  ref::Bytes a = random_data(ta, shape_size(sa), rng, math, 0.1, 3);
  ref::Bytes b = random_data(tb, shape_size(sb), rng, math, -3, 3);
  if (math || atan) {  // finite, moderate arguments for the math library
    for (size_t i = 0; i < size_t(shape_size(sa)); ++i)
      if (!is_float_type(ta) || !std::isfinite(ref::read_value(ta, a, i).f) || std::fabs(ref::read_value(ta, a, i).f) > 1e4)
        ref::write_value(ta, ref::Value{false, __int128(1 + rng() % 3), 0}, a, i);
    for (size_t i = 0; i < size_t(shape_size(sb)); ++i)
      if (!is_float_type(tb) || !std::isfinite(ref::read_value(tb, b, i).f) || std::fabs(ref::read_value(tb, b, i).f) > 1e4)
        ref::write_value(tb, ref::Value{false, __int128(rng() % 3), 0}, b, i);
  }
  // Devices without denormPreserve for f64 (lavapipe) may flush subnormal f64 operands of
  // divide/remainder (documented); keep them out of those two ops there.
  if (!dev.caps().denorm_preserve_f64 && (op == BinaryOp::divide || op == BinaryOp::remainder))
    for (auto [t, d] : {std::pair<DType, ref::Bytes*>{ta, &a}, {tb, &b}})
      if (t == DType::F64)
        for (size_t i = 0; i < d->size() / 8; ++i) {
          double v = ref::read_value(t, *d, i).f;
          if (v != 0 && std::fabs(v) < 2.2250738585072014e-308) ref::write_value(t, ref::Value{true, 0, 0.0}, *d, i);
        }
  const DType out = out_type_of(op, ta, tb);
  // Without f64, an integer operand above 2^24 is carried as an f32 pair (hi + lo): add, subtract,
  // multiply and divide are then within 1 ulp of Nx's once-rounded result (documented).
  const double tol = (math || atan) ? 64 : (!dev.caps().float64 && is_float_type(out) && (!is_float_type(ta) || !is_float_type(tb))) ? 1 : 0;
  const size_t n = static_cast<size_t>(shape_size(so));
  poison_next(dev, n * type_bytes(out));
  Tensor y = binary(op, upload(dev, ta, sa, a), upload(dev, tb, sb, b), out, so);
  ASSERT_EQ(y.shape, so);
  std::string diff = compare_bytes(out, to_binary(y), ref::binary(op, ta, a, sa, tb, b, sb, out, so), tol);
  ASSERT_EQ(diff, "") << op_name(op) << " " << type_name(ta) << " " << shape_string(sa) << ", " << type_name(tb) << " "
                      << shape_string(sb) << " -> " << type_name(out) << shape_string(so);
}

struct Case {
  Shape a, b, out;
};
const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {{37, 41}, {37, 41}, {37, 41}}, {{37, 41}, {41}, {37, 41}},      {{37, 1}, {1, 41}, {37, 41}},
      {{}, {5, 7}, {5, 7}},           {{3, 1, 5, 7}, {4, 1, 7}, {3, 4, 5, 7}}, {{0, 5}, {5}, {0, 5}},
      {{13}, {}, {13}},               {{}, {}, {}}};
  return c;
}

TEST_F(OpsElementwise, BinaryEveryOpAndTypeWithBroadcasts) {
  for (BinaryOp op : all_binary())
    for (DType t : real_types()) {
      if (int_only(op) && is_float_type(t)) continue;
      for (const Case& c : cases()) check_binary(device(), op, t, t, c.a, c.b, c.out, rng());
    }
}

TEST_F(OpsElementwise, BinaryMixedTypes) {
  const std::pair<DType, DType> pairs[] = {
      {DType::S32, DType::F32}, {DType::U8, DType::S8},   {DType::U32, DType::S32}, {DType::U64, DType::S64},
      {DType::S8, DType::F16},  {DType::S32, DType::F64}, {DType::F16, DType::BF16}, {DType::F32, DType::F64},
      {DType::U16, DType::S64}, {DType::BF16, DType::U8}};
  for (BinaryOp op : all_binary())
    for (auto [ta, tb] : pairs) {
      if (int_only(op) && (is_float_type(ta) || is_float_type(tb))) continue;
      check_binary(device(), op, ta, tb, {7, 9}, {9}, {7, 9}, rng());
      check_binary(device(), op, tb, ta, {7, 1}, {7, 9}, {7, 9}, rng());
    }
}

TEST_F(OpsElementwise, KnownNxValues) {
  // s32 16777217 + f32 0.5 is 16777218.0 in Nx.BinaryBackend (computed in f64, rounded once).
  Tensor a = constant(device(), DType::S32, {}, Scalar::of_signed(16777217));
  Tensor b = constant(device(), DType::F32, {}, Scalar::of_float(0.5));
  auto r = to_binary(binary(BinaryOp::add, a, b, DType::F32, {}));
  float f;
  std::memcpy(&f, r.data(), 4);
  EXPECT_EQ(f, 16777218.0f);
}

// Integers the float compute type cannot hold exactly (s32/u32 without f64; s64/u64 always) with
// floats: Nx compares the exact values and computes arithmetic on the exact integer, so values a
// unit away from a float (2^24 + 1, 2^53 + 1, 2^63 - 1) must not collapse onto it.
void check_wide_integers(Device& dev) {
  const double pow2[] = {0, 1, 24, 25, 31, 32, 53, 54, 62, 63, 64};
  for (DType ti : {DType::S32, DType::U32, DType::S64, DType::U64}) {
    if (!type_supported(dev.caps(), ti)) continue;
    const bool sgn = type_info(ti).is_signed();
    const int bits = int(type_info(ti).bits) - (sgn ? 1 : 0);
    for (DType tf : {DType::F32, DType::F64, DType::F16}) {
      if (!type_supported(dev.caps(), tf)) continue;
      std::vector<__int128> ints;
      std::vector<double> floats;
      for (double p : pow2)
        for (int d = -2; d <= 2; ++d)
          for (double f : {std::ldexp(1.0, int(p)), -std::ldexp(1.0, int(p)), std::ldexp(1.0, int(p)) + 0.5,
                           std::ldexp(1.0, int(p)) * (1 + std::ldexp(1.0, -23)), 1.5, -0.5, double(NAN), double(INFINITY)}) {
            __int128 v = (__int128(1) << int(p)) + d;
            for (__int128 x : {v, -v}) {
              if (x > (__int128(1) << bits) - 1 || x < (sgn ? -(__int128(1) << bits) : 0)) continue;
              ints.push_back(x);
              floats.push_back(f);
            }
          }
      const size_t n = ints.size();
      ref::Bytes a(n * type_bytes(ti)), b(n * type_bytes(tf));
      for (size_t k = 0; k < n; ++k) {
        ref::write_value(ti, ref::Value{false, ints[k], 0}, a, k);
        ref::write_value(tf, ref::Value{true, 0, floats[k]}, b, k);
      }
      for (BinaryOp op : {BinaryOp::equal, BinaryOp::not_equal, BinaryOp::less, BinaryOp::less_equal, BinaryOp::greater,
                          BinaryOp::greater_equal, BinaryOp::add, BinaryOp::subtract, BinaryOp::multiply, BinaryOp::divide})
        for (bool int_first : {true, false}) {
          const DType ta = int_first ? ti : tf, tb = int_first ? tf : ti;
          const ref::Bytes& da = int_first ? a : b;
          const ref::Bytes& db = int_first ? b : a;
          const DType out = out_type_of(op, ta, tb);
          poison_next(dev, n * type_bytes(out));
          Tensor y = binary(op, upload(dev, ta, {int64_t(n)}, da), upload(dev, tb, {int64_t(n)}, db), out, {int64_t(n)});
          // Comparisons exact; arithmetic within 1 ulp of the correctly rounded result.
          const double tol = is_float_type(out) ? 1 : 0;
          ASSERT_EQ(compare_bytes(out, to_binary(y), ref::binary(op, ta, da, {int64_t(n)}, tb, db, {int64_t(n)}, out, {int64_t(n)}), tol), "")
              << op_name(op) << " " << type_name(ta) << ", " << type_name(tb) << " -> " << type_name(out);
        }
    }
  }
}

TEST_F(OpsElementwise, WideIntegersWithFloats) {
  check_wide_integers(device());
  check_wide_integers(*open_device(DeviceOptions{.disable = {"f64"}}));
  check_wide_integers(*open_device(DeviceOptions{.disable = {"f64", "int64"}}));
}

// f32 / f32 against the exact quotient rounded once (a double division rounded to f32: double
// rounding is harmless for division, 53 >= 2 * 24 + 2). Random bit patterns (subnormals, specials,
// every exponent), moderate values, and quotients within 2^-17 ulp of a midpoint between two
// floats, where a quotient that is not correctly rounded shows up: for an odd 24-bit B and a
// small odd t, M = t / B mod 2^25 (in [2^24, 2^25): a midpoint's significand) and A = (M B - t) /
// 2^25 make A / B = M / 2^25 - t / (2^25 B), 2^-24 |t| ulp from that midpoint.
void check_divide_f32(Device& dev, std::mt19937& rng) {
  constexpr size_t kPairs = 1 << 18;
  std::vector<float> a(kPairs), b(kPairs);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<double> unit(1.0, 2.0);
  auto sign = [&] { return (bits(rng) & 1) ? -1.0f : 1.0f; };
  for (size_t i = 0; i < kPairs; ++i) {
    switch (i % 4) {
      case 0: a[i] = std::bit_cast<float>(bits(rng)); b[i] = std::bit_cast<float>(bits(rng)); break;
      case 1: a[i] = float(std::ldexp(unit(rng), int(bits(rng) % 41) - 20)); b[i] = float(std::ldexp(-unit(rng), int(bits(rng) % 41) - 20)); break;
      default: {
        uint64_t B, A, M;
        int64_t t;
        do {
          B = (bits(rng) & 0x7fffffu) | 0x800001u;  // odd, 24 bits
          uint32_t inv = uint32_t(B);
          for (int k = 0; k < 5; ++k) inv *= 2u - uint32_t(B) * inv;  // B^-1 mod 2^32 (Newton)
          t = int64_t(bits(rng) % 100) * 2 - 99;  // odd, |t| < 100
          M = (uint64_t(t) * inv) & 0x1ffffffu;
          A = M >= (1u << 24) ? (M * B - uint64_t(t)) >> 25 : 0;
        } while (M < (1u << 24) || A < (1u << 23) || A >= (1u << 24));
        // Exponents mostly inside the fast range, some at its edges and beyond.
        const int ea = int(bits(rng) % 240) - 140, eb = int(bits(rng) % 240) - 140;
        a[i] = std::ldexp(float(A), ea) * sign();
        b[i] = std::ldexp(float(B), eb) * sign();
        if (i % 8 == 3) std::swap(a[i], b[i]);
      }
    }
  }
  ref::Bytes want(kPairs * 4), da(kPairs * 4), db(kPairs * 4);
  for (size_t i = 0; i < kPairs; ++i) {
    const float q = float(double(a[i]) / double(b[i]));
    std::memcpy(want.data() + 4 * i, &q, 4);
  }
  std::memcpy(da.data(), a.data(), da.size());
  std::memcpy(db.data(), b.data(), db.size());
  const Shape s = {int64_t(kPairs)};
  poison_next(dev, kPairs * 4);
  Tensor y = binary(BinaryOp::divide, upload(dev, DType::F32, s, da), upload(dev, DType::F32, s, db), DType::F32, s);
  ref::Bytes got = to_binary(y);
  // A device that flushes f32 subnormals may flush those results and operands on its f32 path.
  const bool flush = !dev.caps().float64 && !dev.caps().denorm_preserve_f32;
  for (size_t i = 0; i < kPairs; ++i) {
    float g, w;
    std::memcpy(&g, got.data() + 4 * i, 4);
    std::memcpy(&w, want.data() + 4 * i, 4);
    if (std::bit_cast<uint32_t>(g) == std::bit_cast<uint32_t>(w) || (std::isnan(g) && std::isnan(w))) continue;
    if (flush && (std::fpclassify(w) == FP_SUBNORMAL || std::fpclassify(a[i]) == FP_SUBNORMAL ||
                  std::fpclassify(b[i]) == FP_SUBNORMAL))
      continue;
    FAIL() << "divide f32 " << std::hexfloat << a[i] << " / " << b[i] << ": got " << g << ", want " << w
           << " (f64 " << (dev.caps().float64 ? "on" : "off") << ")";
  }
}

TEST_F(OpsElementwise, DivideF32CorrectlyRounded) {
  check_divide_f32(device(), rng());
  check_divide_f32(*open_device(DeviceOptions{.disable = {"f64"}}), rng());
}

// f16 and bf16 results of add, subtract, multiply, divide, max and min are computed in f32 where
// that gives the bits of rounding the exact result once (f32_arith_rounds_once): bf16 outputs of
// any f32-exact operands, f16 outputs of operands with at most 11 significant bits. 2^18 pairs of
// random bits (NaN, infinities, subnormals among them) per case against the reference; f32
// operands with an f16 output must keep the f64 path, where f32 rounding would differ next to
// f16's halfway points (about 1 in 8000 sums).
TEST_F(OpsElementwise, HalfArithmeticRoundsOnce) {
  const std::tuple<DType, DType, DType> cases[] = {{DType::F16, DType::F16, DType::F16},
                                                   {DType::BF16, DType::BF16, DType::BF16},
                                                   {DType::F16, DType::S8, DType::F16},
                                                   {DType::BF16, DType::F16, DType::F16},
                                                   {DType::F32, DType::F32, DType::F16},
                                                   {DType::F32, DType::F16, DType::BF16}};
  const int64_t n = 1 << 18;
  for (auto [ta, tb, out] : cases) {
    // f32 operands in [-4, 4], where their sums and products are f16 values.
    const ref::Bytes a = random_data(ta, n, rng(), ta == DType::F32), b = random_data(tb, n, rng(), tb == DType::F32);
    for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract, BinaryOp::multiply, BinaryOp::divide, BinaryOp::max,
                        BinaryOp::min}) {
      Tensor xa = upload(device(), ta, {n}, a), xb = upload(device(), tb, {n}, b);
      poison_next(device(), n * type_bytes(out));
      Tensor y = binary(op, xa, xb, out, {n});
      std::string diff = compare_bytes(out, to_binary(y), ref::binary(op, ta, a, {n}, tb, b, {n}, out, {n}));
      EXPECT_EQ(diff, "") << op_name(op) << " " << type_name(ta) << ", " << type_name(tb) << " -> " << type_name(out);
    }
  }
}

// f16 and bf16 quotients (the device's division where no f16 halfway point or bf16 value is near,
// the correctly rounded f32 quotient elsewhere): every dividend of the type over divisors of every
// kind, and an s8 divisor; about 1 in 800 f16 quotients lies near a halfway point (and a device's
// division may be 2.5 ulps off there), so each divisor sends some 80 of them to the second path.
// NX_VULKAN_TEST_BUILTIN_ERROR=1 runs it again with each quotient moved by up to 2 f32 steps, as
// far off as Vulkan lets a device's division be.
TEST_F(OpsElementwise, NarrowDivideEveryDividend) {
  const ref::Bytes every = every_16_bit_value();
  for (const char* error : {"0", "1"}) {
    ScopedEnv off("NX_VULKAN_TEST_BUILTIN_ERROR", error);
    for (DType t : {DType::F16, DType::BF16}) {
      Tensor a = upload(device(), t, {65536}, every);
      // f16: 3, 7, 0.1, 1.7, 1000, -0.0011, 5 2^-24 (subnormal), 65504, 0, -0, inf, NaN; bf16: 3, 7,
      // 0.1, 1.7, 1000, -0.0011, 5 2^-133 (subnormal), its largest, 0, -0, inf, NaN.
      const std::vector<uint16_t> divisors =
          t == DType::F16 ? std::vector<uint16_t>{0x4200, 0x4700, 0x2e66, 0x3ecd, 0x63d0, 0x9481, 0x0005, 0x7bff, 0x0000,
                                                  0x8000, 0x7c00, 0x7e00}
                          : std::vector<uint16_t>{0x4040, 0x40e0, 0x3dcd, 0x3fda, 0x447a, 0xba90, 0x0005, 0x7f7f, 0x0000,
                                                  0x8000, 0x7f80, 0x7fc0};
      for (uint16_t bits : divisors) {
        ref::Bytes b(2);
        std::memcpy(b.data(), &bits, 2);
        poison_next(device(), 2 * 65536);
        Tensor y = binary(BinaryOp::divide, a, upload(device(), t, {}, b), t, {65536});
        EXPECT_EQ(compare_bytes(t, to_binary(y), ref::binary(BinaryOp::divide, t, every, {65536}, t, b, {}, t, {65536})), "")
            << type_name(t) << " divisor 0x" << std::hex << bits << " moved " << error;
      }
      ref::Bytes s8 = {static_cast<std::byte>(0xfd)};  // -3
      Tensor y = binary(BinaryOp::divide, a, upload(device(), DType::S8, {}, s8), t, {65536});
      EXPECT_EQ(compare_bytes(t, to_binary(y), ref::binary(BinaryOp::divide, t, every, {65536}, DType::S8, s8, {}, t, {65536})), "")
          << type_name(t);
    }
  }
}

// f16 and bf16 square roots (the device's sqrt where no f16 halfway point or bf16 value is near,
// or the root is exact; the accurate f64 sqrt elsewhere): every f16 and every bf16 input, once as
// the device computes it and once with each root moved by up to 4 f32 steps
// (NX_VULKAN_TEST_BUILTIN_ERROR=1), as far off as Vulkan lets a device's sqrt be.
TEST_F(OpsElementwise, NarrowSqrtEveryInput) {
  const ref::Bytes every = every_16_bit_value();
  for (const char* error : {"0", "1"}) {
    ScopedEnv off("NX_VULKAN_TEST_BUILTIN_ERROR", error);
    for (DType t : {DType::F16, DType::BF16}) {
      poison_next(device(), 2 * 65536);
      Tensor y = unary(UnaryOp::sqrt, upload(device(), t, {65536}, every), t);
      EXPECT_EQ(compare_bytes(t, to_binary(y), ref::unary(UnaryOp::sqrt, t, every, t)), "")
          << type_name(t) << " moved " << error;
    }
  }
}

TEST_F(OpsElementwise, BinaryPastOneDispatchBroadcast) {
  check_binary(device(), BinaryOp::add, DType::U8, DType::U8, {4097, 4099}, {4099}, {4097, 4099}, rng());
}

TEST_F(OpsElementwise, SelectAndClip) {
  for (DType t : real_types()) {
    for (DType p : {DType::U8, DType::F32, t}) {
      const Shape so = {6, 11};
      ref::Bytes pd = random_data(p, 11, rng()), td = random_data(t, 66, rng()), fd = random_data(t, 1, rng());
      poison_next(device(), 66 * type_bytes(t));
      Tensor y = select(upload(device(), p, {11}, pd), upload(device(), t, so, td), upload(device(), t, {}, fd), t, so);
      ASSERT_EQ(compare_bytes(t, to_binary(y), ref::select(p, pd, {11}, t, td, so, t, fd, {}, t, so)), "")
          << "select pred " << type_name(p) << " " << type_name(t);
    }
    for (DType bound : {t, DType::S8}) {
      const DType out = merged(t, bound);
      ref::Bytes xd = random_data(t, 301, rng()), lo = random_data(bound, 1, rng()), hi = random_data(bound, 1, rng());
      Tensor y = clip(upload(device(), t, {301}, xd), upload(device(), bound, {}, lo), upload(device(), bound, {}, hi), out);
      ASSERT_EQ(compare_bytes(out, to_binary(y), ref::clip(t, xd, bound, lo, bound, hi, out)), "")
          << "clip " << type_name(t) << " bounds " << type_name(bound);
    }
  }
}

TEST_F(OpsElementwise, WithoutF64AndInt64) {
  auto dev = open_device(DeviceOptions{.disable = {"f64", "int64"}});
  for (DType t : {DType::U8, DType::S16, DType::S32, DType::F16, DType::BF16, DType::F32}) {
    for (UnaryOp op : {UnaryOp::exp, UnaryOp::sin, UnaryOp::abs, UnaryOp::round, UnaryOp::sign, UnaryOp::negate})
      check_unary(*dev, op, t, {129}, rng());
    for (BinaryOp op : {BinaryOp::add, BinaryOp::multiply, BinaryOp::divide, BinaryOp::remainder, BinaryOp::max,
                        BinaryOp::less, BinaryOp::quotient, BinaryOp::right_shift}) {
      if (int_only(op) && is_float_type(t)) continue;
      check_binary(*dev, op, t, t, {9, 13}, {13}, {9, 13}, rng());
    }
  }
  for (auto [ta, tb] : {std::pair{DType::S32, DType::F32}, {DType::U32, DType::F32}, {DType::F16, DType::U32}})
    for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract, BinaryOp::multiply, BinaryOp::divide, BinaryOp::less,
                        BinaryOp::equal})
      check_binary(*dev, op, ta, tb, {9, 13}, {13}, {9, 13}, rng());
  Tensor f = constant(*dev, DType::F32, {3}, Scalar::of_float(1));
  EXPECT_NXVK_ERROR(as_type(f, DType::F64), ErrorKind::Unsupported, "unsupported on this device: f64");
  EXPECT_NXVK_ERROR(constant(*dev, DType::S64, {3}, Scalar::of_signed(1)), ErrorKind::Unsupported,
                    "unsupported on this device: s64");
  Tensor i = constant(*dev, DType::U32, {3}, Scalar::of_signed(1));
  EXPECT_NXVK_ERROR(binary(BinaryOp::add, i, i, DType::U64, {3}), ErrorKind::Unsupported, "unsupported on this device: u64");
}

}  // namespace
}  // namespace nxvk::test
