// Integer algebra on the device, as rapidcheck properties: laws that hold exactly in Nx's
// wrapping integer arithmetic, on random bits of every integer type (so the extremes, INT_MIN / -1
// and sign mixes come up), for random lengths. A failing case is shrunk and printed by rapidcheck.
#include <rapidcheck.h>

#include "ops_elementwise_util.hpp"

namespace nxvk::test {
namespace {

class IntegerLaws : public DeviceTest {};

const std::vector<DType> kIntTypes = {DType::U8, DType::S8, DType::U16, DType::S16, DType::U32,
                                      DType::S32, DType::U64, DType::S64};

// A random tensor of `n` elements of integer type `t`: each element random bits, or with
// probability 1/4 one of the type's edge values.
Tensor random_ints(Device& dev, DType t, int64_t n) {
  const size_t b = type_bytes(t);
  ref::Bytes data(size_t(n) * b);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = *rc::gen::arbitrary<uint64_t>();
    if (*rc::gen::inRange(0, 4) == 0)
      v = *rc::gen::elementOf(std::vector<uint64_t>{0, 1, ~0ull, 0x7f, 0x80, 0x7fff, 0x8000, 0x7fffffff,
                                                    0x80000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull});
    std::memcpy(data.data() + size_t(i) * b, &v, b);
  }
  return from_binary(dev, t, {n}, data);
}

Tensor op(BinaryOp o, const Tensor& a, const Tensor& b) { return binary(o, a, b, a.type, a.shape); }
ref::Bytes bits(const Tensor& t) { return to_binary(t); }

// Runs `law` on a random integer type the device has and a random length.
template <class Law>
void check_law(Device& dev, const char* name, Law law) {
  EXPECT_TRUE(rc::check(name, [&] {
    std::vector<DType> types;
    for (DType t : kIntTypes)
      if (type_supported(dev.caps(), t)) types.push_back(t);
    const DType t = *rc::gen::elementOf(types);
    const int64_t n = *rc::gen::inRange<int64_t>(1, 70);
    RC_TAG(type_name(t));
    law(t, n);
  }));
}

TEST_F(IntegerLaws, AddSubtractNegate) {
  Device& dev = device();
  check_law(dev, "(a + b) - b == a, a + (-a) == 0, -(-a) == a", [&](DType t, int64_t n) {
    Tensor a = random_ints(dev, t, n), b = random_ints(dev, t, n);
    RC_ASSERT(bits(op(BinaryOp::subtract, op(BinaryOp::add, a, b), b)) == bits(a));
    Tensor zero = constant(dev, t, {n}, Scalar::of_signed(0));
    if (type_info(t).is_signed()) {
      Tensor na = unary(UnaryOp::negate, a, t);
      RC_ASSERT(bits(op(BinaryOp::add, a, na)) == bits(zero));
      RC_ASSERT(bits(unary(UnaryOp::negate, na, t)) == bits(a));
    }
    RC_ASSERT(bits(op(BinaryOp::subtract, a, a)) == bits(zero));
  });
}

TEST_F(IntegerLaws, MultiplyRing) {
  Device& dev = device();
  check_law(dev, "a b == b a, (a b) c == a (b c), a (b + c) == a b + a c", [&](DType t, int64_t n) {
    Tensor a = random_ints(dev, t, n), b = random_ints(dev, t, n), c = random_ints(dev, t, n);
    RC_ASSERT(bits(op(BinaryOp::multiply, a, b)) == bits(op(BinaryOp::multiply, b, a)));
    RC_ASSERT(bits(op(BinaryOp::multiply, op(BinaryOp::multiply, a, b), c)) ==
              bits(op(BinaryOp::multiply, a, op(BinaryOp::multiply, b, c))));
    RC_ASSERT(bits(op(BinaryOp::multiply, a, op(BinaryOp::add, b, c))) ==
              bits(op(BinaryOp::add, op(BinaryOp::multiply, a, b), op(BinaryOp::multiply, a, c))));
  });
}

TEST_F(IntegerLaws, QuotientRemainder) {
  Device& dev = device();
  check_law(dev, "b != 0: quotient(a, b) b + remainder(a, b) == a; remainder takes a's sign", [&](DType t, int64_t n) {
    Tensor a = random_ints(dev, t, n);
    // b with its zeros replaced by 1 (Nx raises on division by zero).
    Tensor b0 = random_ints(dev, t, n);
    Tensor zero = constant(dev, t, {n}, Scalar::of_signed(0)), one = constant(dev, t, {n}, Scalar::of_signed(1));
    Tensor b = select(binary(BinaryOp::equal, b0, zero, DType::U8, {n}), one, b0, t, {n});
    Tensor q = op(BinaryOp::quotient, a, b), r = op(BinaryOp::remainder, a, b);
    RC_ASSERT(bits(op(BinaryOp::add, op(BinaryOp::multiply, q, b), r)) == bits(a));
    if (type_info(t).is_signed()) {
      // r == 0 or sign(r) == sign(a)
      Tensor sr = unary(UnaryOp::sign, r, t), sa = unary(UnaryOp::sign, a, t);
      Tensor ok = binary(BinaryOp::logical_or, binary(BinaryOp::equal, r, zero, DType::U8, {n}),
                         binary(BinaryOp::equal, sr, sa, DType::U8, {n}), DType::U8, {n});
      RC_ASSERT(bits(ok) == bits(constant(dev, DType::U8, {n}, Scalar::of_signed(1))));
    }
  });
}

TEST_F(IntegerLaws, Bitwise) {
  Device& dev = device();
  check_law(dev, "(a & b) + (a | b) == a + b, a ^ b == (a | b) - (a & b), ~~a == a, a ^ a == 0",
            [&](DType t, int64_t n) {
              Tensor a = random_ints(dev, t, n), b = random_ints(dev, t, n);
              Tensor band = op(BinaryOp::bitwise_and, a, b), bor = op(BinaryOp::bitwise_or, a, b);
              RC_ASSERT(bits(op(BinaryOp::add, band, bor)) == bits(op(BinaryOp::add, a, b)));
              RC_ASSERT(bits(op(BinaryOp::bitwise_xor, a, b)) == bits(op(BinaryOp::subtract, bor, band)));
              RC_ASSERT(bits(unary(UnaryOp::bitwise_not, unary(UnaryOp::bitwise_not, a, t), t)) == bits(a));
              RC_ASSERT(bits(op(BinaryOp::bitwise_xor, a, a)) == bits(constant(dev, t, {n}, Scalar::of_signed(0))));
            });
}

TEST_F(IntegerLaws, ShiftsAndMinMax) {
  Device& dev = device();
  check_law(dev, "a << k == a 2^k, (a << k) >> k keeps the low bits, max + min == a + b", [&](DType t, int64_t n) {
    Tensor a = random_ints(dev, t, n), b = random_ints(dev, t, n);
    const int64_t width = int64_t(type_info(t).bits);
    const int64_t k = *rc::gen::inRange<int64_t>(0, width);
    Tensor kt = constant(dev, t, {n}, Scalar::of_signed(k));
    Tensor pow2 = op(BinaryOp::left_shift, constant(dev, t, {n}, Scalar::of_signed(1)), kt);
    Tensor shifted = op(BinaryOp::left_shift, a, kt);
    RC_ASSERT(bits(shifted) == bits(op(BinaryOp::multiply, a, pow2)));
    // Unsigned: (a << k) >> k == a & (2^(width-k) - 1).
    if (!type_info(t).is_signed()) {
      Tensor mask = op(BinaryOp::right_shift, unary(UnaryOp::bitwise_not, constant(dev, t, {n}, Scalar::of_signed(0)), t), kt);
      RC_ASSERT(bits(op(BinaryOp::right_shift, shifted, kt)) == bits(op(BinaryOp::bitwise_and, a, mask)));
    }
    RC_ASSERT(bits(op(BinaryOp::add, op(BinaryOp::max, a, b), op(BinaryOp::min, a, b))) == bits(op(BinaryOp::add, a, b)));
  });
}

TEST_F(IntegerLaws, OnDeviceWithoutInt64) {
  auto dev = open_device(DeviceOptions{.disable = {"f64", "int64"}});
  check_law(*dev, "(a + b) - b == a and quotient/remainder without int64", [&](DType t, int64_t n) {
    Tensor a = random_ints(*dev, t, n), b = random_ints(*dev, t, n);
    RC_ASSERT(bits(op(BinaryOp::subtract, op(BinaryOp::add, a, b), b)) == bits(a));
    Tensor zero = constant(*dev, t, {n}, Scalar::of_signed(0)), one = constant(*dev, t, {n}, Scalar::of_signed(1));
    Tensor bb = select(binary(BinaryOp::equal, b, zero, DType::U8, {n}), one, b, t, {n});
    RC_ASSERT(bits(op(BinaryOp::add, op(BinaryOp::multiply, op(BinaryOp::quotient, a, bb), bb),
                      op(BinaryOp::remainder, a, bb))) == bits(a));
  });
}

}  // namespace
}  // namespace nxvk::test
