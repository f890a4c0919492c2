// Elementwise ops on f32 subnormals as operands and results, on the default device and with f64
// masked off (the reductions' and cumulative ops' cases are in their own test files). GPUs may
// flush f32 subnormals to zero in arithmetic and comparisons (NVIDIA does: it reports
// shaderDenormPreserveFloat32 = false); Nx keeps them, so every op here must give the CPU
// reference's bits. lavapipe does not flush, so there these tests check the logic of the
// subnormal-safe paths; on a flushing device they check that those paths do not flush.
#include <cmath>
#include <cstring>

#include "ops_elementwise_util.hpp"

namespace nxvk::test {
namespace {

class Subnormal : public DeviceTest {
 protected:
  // The default device, then one without f64 (f32 computed in f32).
  std::vector<Device*> devices() {
    if (!masked_) masked_ = open_device(DeviceOptions{.disable = {"f64", "int64"}});
    return {&device(), masked_.get()};
  }

 private:
  std::shared_ptr<Device> masked_;
};

// n f32 elements of tiny_f32_bits, or (powers) of power_of_two_f32_bits.
ref::Bytes tiny(std::mt19937& rng, size_t n, bool powers = false) {
  ref::Bytes b(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = powers ? power_of_two_f32_bits(rng) : tiny_f32_bits(rng);
    std::memcpy(b.data() + 4 * i, &v, 4);
  }
  return b;
}
std::string where(const Device& d) { return d.caps().float64 ? " (f64 device)" : " (f64 masked off)"; }

TEST_F(Subnormal, UnaryOps) {
  for (Device* d : devices()) {
    const size_t n = 4099;
    const ref::Bytes in = tiny(rng(), n);
    for (UnaryOp op : {UnaryOp::negate, UnaryOp::abs, UnaryOp::sign, UnaryOp::floor, UnaryOp::ceil, UnaryOp::round,
                       UnaryOp::is_nan, UnaryOp::is_infinity}) {
      const DType out = op == UnaryOp::is_nan || op == UnaryOp::is_infinity ? DType::U8 : DType::F32;
      poison_next(*d, n * 4);
      auto got = to_binary(unary(op, upload(*d, DType::F32, {int64_t(n)}, in), out));
      EXPECT_EQ(compare_bytes(out, got, ref::unary(op, DType::F32, in, out)), "") << op_name(op) << where(*d);
    }
  }
}

TEST_F(Subnormal, BinaryOps) {
  for (Device* d : devices()) {
    // Same shape, and a broadcast operand of powers of two (products and quotients that cross
    // between the normal and the subnormal range).
    const Shape s{61, 67}, sp{67};
    const ref::Bytes a = tiny(rng(), 61 * 67), b = tiny(rng(), 61 * 67), p = tiny(rng(), 67, true);
    for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract, BinaryOp::multiply, BinaryOp::divide, BinaryOp::remainder,
                        BinaryOp::max, BinaryOp::min, BinaryOp::equal, BinaryOp::not_equal, BinaryOp::less,
                        BinaryOp::less_equal, BinaryOp::greater, BinaryOp::greater_equal, BinaryOp::logical_and,
                        BinaryOp::logical_or, BinaryOp::logical_xor}) {
      const bool arith = op == BinaryOp::add || op == BinaryOp::subtract || op == BinaryOp::multiply ||
                         op == BinaryOp::divide || op == BinaryOp::remainder || op == BinaryOp::max || op == BinaryOp::min;
      const DType out = arith ? DType::F32 : DType::U8;
      for (bool powers : {false, true}) {
        const ref::Bytes& rhs = powers ? p : b;
        const Shape& sr = powers ? sp : s;
        poison_next(*d, a.size());
        auto got = to_binary(binary(op, upload(*d, DType::F32, s, a), upload(*d, DType::F32, sr, rhs), out, s));
        auto want = ref::binary(op, DType::F32, a, s, DType::F32, rhs, sr, out, s);
        EXPECT_EQ(compare_bytes(out, got, want), "") << op_name(op) << (powers ? " by powers of two" : "") << where(*d);
      }
    }
  }
}

TEST_F(Subnormal, SelectAndClip) {
  for (Device* d : devices()) {
    const Shape s{1000};
    const ref::Bytes pred = tiny(rng(), 1000), x = tiny(rng(), 1000), y = tiny(rng(), 1000);
    auto up = [&](const ref::Bytes& v) { return upload(*d, DType::F32, s, v); };
    poison_next(*d, x.size());
    auto got = to_binary(select(up(pred), up(x), up(y), DType::F32, s));
    auto want = ref::select(DType::F32, pred, s, DType::F32, x, s, DType::F32, y, s, DType::F32, s);
    EXPECT_EQ(compare_bytes(DType::F32, got, want), "") << "select" << where(*d);
    for (int k = 0; k < 16; ++k) {  // scalar bounds, as Nx passes them
      const ref::Bytes lo = tiny(rng(), 1), hi = tiny(rng(), 1);
      poison_next(*d, x.size());
      got = to_binary(clip(up(x), upload(*d, DType::F32, {}, lo), upload(*d, DType::F32, {}, hi), DType::F32));
      want = ref::clip(DType::F32, x, DType::F32, lo, DType::F32, hi, DType::F32);
      EXPECT_EQ(compare_bytes(DType::F32, got, want), "") << "clip" << where(*d);
    }
  }
}

}  // namespace
}  // namespace nxvk::test
