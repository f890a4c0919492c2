// as_type and bitcast against the CPU reference: every pair of real types, awkward shapes.
#include "ops_elementwise_util.hpp"

namespace nxvk::test {
namespace {

class OpsCast : public DeviceTest {};

TEST_F(OpsCast, AsTypeEveryPairMatchesReference) {
  const std::vector<Shape> shapes = {{}, {0}, {1}, {3, 1, 5}, {1031}};
  for (DType from : real_types())
    for (DType to : real_types())
      for (const Shape& s : shapes) {
        const size_t n = static_cast<size_t>(shape_size(s));
        ref::Bytes in = random_data(from, n, rng());
        Tensor x = upload(device(), from, s, in);
        poison_next(device(), n * type_bytes(to));
        Tensor y = as_type(x, to);
        ASSERT_EQ(y.type, to);
        ASSERT_EQ(y.shape, s);
        std::string diff = compare_bytes(to, to_binary(y), ref::as_type(from, in, to));
        ASSERT_EQ(diff, "") << type_name(from) << " -> " << type_name(to) << " shape " << shape_string(s);
      }
}

TEST_F(OpsCast, AsTypeKnownNxValues) {
  // Values checked against Nx.BinaryBackend 0.13.1.
  std::vector<double> v = {300.7, -1.5, 1e20, -1e20, NAN, INFINITY, -INFINITY};
  Tensor x = from_binary(device(), DType::F64, {7}, std::as_bytes(std::span(v)));
  auto u8 = to_binary(as_type(x, DType::U8));
  const uint8_t want_u8[] = {44, 255, 0, 0, 0, 255, 0};
  EXPECT_EQ(std::memcmp(u8.data(), want_u8, 7), 0);
  auto s32 = to_binary(as_type(x, DType::S32));
  const int32_t want_s32[] = {300, -1, 1661992960, -1661992960, 0, 2147483647, -2147483647 - 1};
  EXPECT_EQ(std::memcmp(s32.data(), want_s32, sizeof want_s32), 0);
  // Erlang rounds a bignum (|x| >= 2^59) to f32 through a double, a small integer directly.
  std::vector<int64_t> big = {(1ll << 53) + (1ll << 29) + 1, (1ll << 59) + (1ll << 35) + 1};
  auto f = to_binary(as_type(from_binary(device(), DType::S64, {2}, std::as_bytes(std::span(big))), DType::F32));
  const uint32_t want_f[] = {0x5a000001u, 0x5d000000u};
  EXPECT_EQ(std::memcmp(f.data(), want_f, 8), 0);
}

TEST_F(OpsCast, AsTypePastOneDispatch) {
  const Shape s = {65535 * 256 + 77};
  const size_t n = static_cast<size_t>(s[0]);
  ref::Bytes in = random_data(DType::S16, n, rng());
  Tensor y = as_type(upload(device(), DType::S16, s, in), DType::U8);
  EXPECT_EQ(compare_bytes(DType::U8, to_binary(y), ref::as_type(DType::S16, in, DType::U8)), "");
}

// f16 <-> f32 (nx_half_to_float, nx_float_to_half: straight-line integer code with selects):
// every f16 value to f32 and back (NaN canonical), and f32 values at and next to every rounding
// case: the 13 dropped bits at, just below and just above the halfway point for every f16
// significand and exponent (and beyond the range: overflow to inf), and (k + 1/2) 2^-24 and its
// neighbours for every subnormal k, against the reference's conversions.
TEST_F(OpsCast, F16ConversionsAtEveryRoundingCase) {
  const ref::Bytes halves = every_16_bit_value();
  Tensor in16 = upload(device(), DType::F16, {65536}, halves);
  poison_next(device(), 4 * 65536);  // unwritten elements fail
  Tensor wide = as_type(in16, DType::F32);
  EXPECT_EQ(compare_bytes(DType::F32, to_binary(wide), ref::as_type(DType::F16, halves, DType::F32)), "");
  poison_next(device(), 2 * 65536);
  Tensor back = as_type(wide, DType::F16);
  EXPECT_EQ(compare_bytes(DType::F16, to_binary(back), ref::as_type(DType::F32, to_binary(wide), DType::F16)), "");
  std::vector<uint32_t> bits;
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t hi = 0x33000000u >> 13; hi <= 0x47800000u >> 13; ++hi)
      for (uint32_t lo : {0x0u, 0x1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu}) bits.push_back(sign | hi << 13 | lo);
    for (uint32_t k = 0; k < 1024; ++k) {
      float mid = (float(k) + 0.5f) * 0x1p-24f;
      uint32_t m;
      std::memcpy(&m, &mid, 4);
      for (uint32_t v : {m - 1, m, m + 1}) bits.push_back(sign | v);
    }
    for (uint32_t v : {0x00000001u, 0x007fffffu, 0x7f800000u, 0x7fc00000u, 0x7f7fffffu}) bits.push_back(sign | v);
  }
  ref::Bytes f32(4 * bits.size());
  std::memcpy(f32.data(), bits.data(), f32.size());
  Tensor in32 = upload(device(), DType::F32, {int64_t(bits.size())}, f32);
  poison_next(device(), 2 * bits.size());
  Tensor narrow = as_type(in32, DType::F16);
  EXPECT_EQ(compare_bytes(DType::F16, to_binary(narrow), ref::as_type(DType::F32, f32, DType::F16)), "");
}

// f64 to f16 rounds once, to bf16 through Nx's f32 rounding then truncation: f64 values a small
// fraction of an f32 ulp off each f16 halfway point (which a detour through f32 would round onto
// the halfway point, then to even) and off each bf16 value (where the f32 rounding decides the
// truncation), over f16's and part of bf16's range, against the reference.
TEST_F(OpsCast, F64ToF16AndBf16RoundAsNx) {
  std::vector<double> v;
  // f16 halfway points (m + 1/2) 2^(e - 10), m = 1024 + k in f16's normal binades, k in its
  // subnormal one (e = -14: m 2^-24); k odd and even. 2^-30 of them is under half an f32 ulp.
  for (int e = -15; e <= 15; ++e)
    for (int k : {0, 1, 2, 3, 512, 513, 1000, 1023}) {
      const double mid = e < -14 ? std::ldexp(2 * k + 1, -25) : std::ldexp(2 * (1024 + k) + 1, e - 11);
      for (double d : {-0x1p-30, 0x1p-30}) v.insert(v.end(), {mid * (1 + d), -mid * (1 + d)});
    }
  for (int e = -130; e <= 127; e += 3)  // bf16 values b, a sixteenth of an f32 ulp off
    for (int k : {0, 1, 64, 127}) {
      const double b = std::ldexp(128 + k, e - 7);
      for (double d : {-0x1p-28, 0x1p-28}) v.insert(v.end(), {b * (1 + d), -b * (1 + d)});
    }
  ref::Bytes in(8 * v.size());
  std::memcpy(in.data(), v.data(), in.size());
  Tensor x = upload(device(), DType::F64, {int64_t(v.size())}, in);
  for (DType to : {DType::F16, DType::BF16}) {
    poison_next(device(), 2 * v.size());
    EXPECT_EQ(compare_bytes(to, to_binary(as_type(x, to)), ref::as_type(DType::F64, in, to)), "") << type_name(to);
  }
}

TEST_F(OpsCast, BitcastKeepsBitsAndChecksWidths) {
  ref::Bytes in = random_data(DType::F32, 13, rng());
  Tensor y = bitcast(upload(device(), DType::F32, {13}, in), DType::S32);
  EXPECT_EQ(y.type, DType::S32);
  EXPECT_EQ(to_binary(y), in);
  Tensor x = upload(device(), DType::F32, {13}, in);
  EXPECT_NXVK_ERROR(bitcast(x, DType::F16), ErrorKind::InvalidArgument, "bitcast", "width");
  EXPECT_NXVK_ERROR(bitcast(x, DType::C64), ErrorKind::InvalidArgument, "bitcast", "complex");
  EXPECT_NXVK_ERROR(as_type(x, DType::C64), ErrorKind::Unsupported, "as_type", "complex types are not supported yet");
}

TEST_F(OpsCast, WithoutF64AndInt64) {
  auto dev = open_device(DeviceOptions{.disable = {"f64", "int64"}});
  for (DType from : real_types())
    for (DType to : real_types()) {
      const bool ok = type_supported(dev->caps(), from) && type_supported(dev->caps(), to);
      if (!type_supported(dev->caps(), from)) continue;
      ref::Bytes in = random_data(from, 301, rng());
      Tensor x = upload(*dev, from, {301}, in);
      if (!ok) {
        EXPECT_NXVK_ERROR(as_type(x, to), ErrorKind::Unsupported, "unsupported on this device");
        continue;
      }
      ASSERT_EQ(compare_bytes(to, to_binary(as_type(x, to)), ref::as_type(from, in, to)), "")
          << type_name(from) << " -> " << type_name(to);
    }
}

}  // namespace
}  // namespace nxvk::test
