// constant, iota and eye against the CPU reference.
#include "ops_elementwise_util.hpp"

namespace nxvk::test {
namespace {

class OpsCreation : public DeviceTest {};

TEST_F(OpsCreation, ConstantEveryTypeAndScalarKind) {
  const Scalar values[] = {Scalar::of_signed(-1), Scalar::of_signed(300), Scalar::of_unsigned(~0ull),
                           Scalar::of_signed((1ll << 53) + (1ll << 29) + 1), Scalar::of_float(2.75),
                           Scalar::of_float(-1e20), Scalar::of_float(NAN), Scalar::of_float(-INFINITY),
                           Scalar::of_float(-0.0), Scalar::of_float(65519.99)};
  std::vector<DType> types = real_types();
  types.insert(types.end(), sub_byte_types().begin(), sub_byte_types().end());
  for (DType t : types)
    for (const Scalar& v : values)
      for (const Shape& s : std::vector<Shape>{{}, {0}, {3}, {2, 7}}) {
        poison_next(device(), shape_size(s) * type_bytes(t));
        Tensor c = constant(device(), t, s, v);
        ASSERT_EQ(compare_bytes(t, to_binary(c), ref::constant(t, s, v)), "") << type_name(t) << shape_string(s);
      }
  // Complex: the parts as f32 / f64 (Nx.tensor(Complex.new(1, -1)) is a constant); a real value
  // has imaginary part 0.
  const float c64[] = {1.0f, -1.0f, 1.0f, -1.0f};
  auto got64 = to_binary(constant(device(), DType::C64, {2}, Scalar::of_complex(1, -1)));
  EXPECT_EQ(std::memcmp(got64.data(), c64, sizeof c64), 0);
  if (type_supported(device().caps(), DType::C128)) {
    const double c128[] = {2.5, 0.0, 2.5, 0.0, 2.5, 0.0};
    auto got128 = to_binary(constant(device(), DType::C128, {3}, Scalar::of_float(2.5)));
    ASSERT_EQ(got128.size(), sizeof c128);
    EXPECT_EQ(std::memcmp(got128.data(), c128, sizeof c128), 0);
  }
  EXPECT_NXVK_ERROR(constant(device(), DType::F32, {2}, Scalar::of_complex(1, 1)), ErrorKind::InvalidArgument,
                    "constant", "complex value");
}

TEST_F(OpsCreation, IotaAndEye) {
  std::vector<DType> types = real_types();
  types.insert(types.end(), sub_byte_types().begin(), sub_byte_types().end());
  for (DType t : types) {
    for (const Shape& s : std::vector<Shape>{{}, {0}, {300}, {3, 1, 129}, {2, 3, 5}}) {
      Tensor x = iota(device(), t, s, std::nullopt);
      ASSERT_EQ(compare_bytes(t, to_binary(x), ref::iota(t, s, std::nullopt)), "") << type_name(t);
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        Tensor y = iota(device(), t, s, axis);
        ASSERT_EQ(compare_bytes(t, to_binary(y), ref::iota(t, s, axis)), "") << type_name(t) << " axis " << axis;
      }
    }
    for (const Shape& s : std::vector<Shape>{{3, 3}, {2, 4, 3}, {1, 5}, {0, 2}}) {
      ASSERT_EQ(compare_bytes(t, to_binary(eye(device(), t, s)), ref::eye(t, s)), "") << type_name(t) << shape_string(s);
    }
  }
  // Past 2^24 elements: f32 iota rounds as Nx writes integers (and past one dispatch).
  const Shape big = {(1 << 24) + 5};
  Tensor y = iota(device(), DType::F32, big, std::nullopt);
  EXPECT_EQ(compare_bytes(DType::F32, to_binary(y), ref::iota(DType::F32, big, std::nullopt)), "");
  EXPECT_NXVK_ERROR(iota(device(), DType::F32, {3}, 1), ErrorKind::InvalidArgument, "iota", "axis");
  EXPECT_NXVK_ERROR(eye(device(), DType::F32, {3}), ErrorKind::InvalidArgument, "eye");
}

}  // namespace
}  // namespace nxvk::test
