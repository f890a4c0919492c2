// Shape ops against the CPU reference (tests/ref/shape.cpp): every type (complex included: they
// are bit moves), awkward shapes, random bits (NaN payloads and -0.0 must survive).
#include <rapidcheck.h>

#include <algorithm>
#include <numeric>

#include "ops_shape_util.hpp"
#include "ref/shape.hpp"

namespace nxvk::test {
namespace {

class ShapeOps : public DeviceTest {
 protected:
  ref::HostTensor rand(DType t, const Shape& s) { return random_tensor(rng(), t, s); }
  template <class F>
  void for_types(F f) {
    for (DType t : all_types()) {
      if (!device_has(device(), t)) continue;
      SCOPED_TRACE(type_name(t));
      f(t);
    }
  }
};

const std::vector<Shape> kShapes = {{}, {1}, {0}, {7}, {3, 0, 2}, {1, 1}, {5, 1, 3}, {13, 17}, {2, 3, 5, 7}, {31, 1, 33}};

TEST_F(ShapeOps, ReshapeAndSqueezeShareBits) {
  for_types([&](DType t) {
    auto h = rand(t, {2, 1, 3});
    Tensor x = upload(device(), h);
    auto r = download(reshape(x, {3, 2}));
    EXPECT_EQ(r.bytes, h.bytes);
    auto s = squeeze(x, {1});
    EXPECT_EQ(s.shape, (Shape{2, 3}));
    EXPECT_EQ(download(s).bytes, h.bytes);
  });
  Tensor x = upload(device(), rand(DType::F32, {2, 3}));
  EXPECT_NXVK_ERROR(reshape(x, {4}), ErrorKind::InvalidArgument, "reshape", "{2, 3}");
  EXPECT_NXVK_ERROR(squeeze(x, {0}), ErrorKind::InvalidArgument, "squeeze", "not 1");
}

TEST_F(ShapeOps, Broadcast) {
  for_types([&](DType t) {
    struct Case { Shape in, out; std::vector<int64_t> axes; };
    for (const Case& c : std::vector<Case>{{{}, {3, 4}, {}}, {{3}, {2, 3}, {1}}, {{3, 1}, {3, 5}, {0, 1}},
                                           {{1, 7}, {4, 2, 7}, {1, 2}}, {{5}, {5, 3}, {0}}, {{2}, {0, 2}, {1}},
                                           {{1}, {65535 * 4 + 3}, {0}}}) {
      poison_cache(device(), shape_size(c.out) * type_bytes(t));
      auto h = rand(t, c.in);
      EXPECT_TRUE(same_bits(download(broadcast(upload(device(), h), c.out, c.axes)), ref::broadcast(h, c.out, c.axes)))
          << shape_string(c.in) << " -> " << shape_string(c.out);
    }
  });
  Tensor x = upload(device(), rand(DType::F32, {3}));
  EXPECT_NXVK_ERROR(broadcast(x, {4}, {0}), ErrorKind::InvalidArgument, "broadcast", "size 3");
}

TEST_F(ShapeOps, TransposeEveryPermutationUpToRank4AndTiled) {
  for_types([&](DType t) {
    for (const Shape& s : std::vector<Shape>{{}, {5}, {3, 4}, {2, 0, 3}, {2, 3, 5, 7}, {1, 33, 1, 65}, {37, 70}, {3, 64, 33}}) {
      std::vector<int64_t> p(s.size());
      std::iota(p.begin(), p.end(), 0);
      auto h = rand(t, s);
      Tensor x = upload(device(), h);
      do {
        poison_cache(device(), h.bytes.size());
        ASSERT_TRUE(same_bits(download(transpose(x, p)), ref::transpose(h, p))) << shape_string(s);
      } while (std::next_permutation(p.begin(), p.end()));
    }
  });
}

TEST_F(ShapeOps, PadNegativeAndInterior) {
  for_types([&](DType t) {
    struct Case { Shape s; std::vector<PadConfig> c; };
    for (const Case& c : std::vector<Case>{{{}, {}},
                                           {{5}, {{2, 3, 0}}},
                                           {{5}, {{-2, -1, 1}}},
                                           {{4, 3}, {{1, -1, 2}, {-1, 2, 0}}},
                                           {{1, 6, 2}, {{0, 0, 3}, {-3, -3, 0}, {2, -1, 1}}},
                                           {{7}, {{-7, 0, 0}}},
                                           {{3, 0}, {{1, 1, 1}, {2, 0, 5}}}}) {
      auto h = rand(t, c.s), v = rand(t, {});
      auto want = ref::pad(h, v, c.c, t);
      poison_cache(device(), want.bytes.size());
      EXPECT_TRUE(same_bits(download(pad(upload(device(), h), upload(device(), v), c.c, t)), want)) << shape_string(c.s);
    }
  });
}

TEST_F(ShapeOps, PadValueOfAnotherType) {
  auto h = random_tensor(rng(), DType::F32, {4, 3}, true);
  auto v = ref::make(DType::S32, {});
  ref::set(v, 0, ref::of_int(-7));
  std::vector<PadConfig> c = {{1, 2, 1}, {0, 1, 0}};
  EXPECT_TRUE(same_bits(download(pad(upload(device(), h), upload(device(), v), c, DType::F32)), ref::pad(h, v, c, DType::F32)));
}

TEST_F(ShapeOps, Reverse) {
  for_types([&](DType t) {
    for (const Shape& s : kShapes) {
      auto h = rand(t, s);
      std::vector<int64_t> axes;
      for (size_t d = 0; d < s.size(); ++d)
        if (rng()() % 2) axes.push_back(static_cast<int64_t>(d));
      poison_cache(device(), h.bytes.size());
      EXPECT_TRUE(same_bits(download(reverse(upload(device(), h), axes)), ref::reverse(h, axes))) << shape_string(s);
    }
  });
}

TEST_F(ShapeOps, SliceStridesAndClampedStarts) {
  for_types([&](DType t) {
    for (const Shape& s : std::vector<Shape>{{}, {9}, {6, 7}, {3, 1, 11}, {4, 0, 3}}) {
      auto h = rand(t, s);
      Tensor x = upload(device(), h);
      for (int rep = 0; rep < 4; ++rep) {
        std::vector<int64_t> st, len, str;
        for (int64_t d : s) {
          len.push_back(d ? static_cast<int64_t>(rng()() % (d + 1)) : 0);
          st.push_back(static_cast<int64_t>(rng()() % 15) - 5);  // negative and past-the-end: clamped
          str.push_back(1 + rng()() % 3);
        }
        auto want = ref::slice(h, st, len, str);
        poison_cache(device(), want.bytes.size());
        EXPECT_TRUE(same_bits(download(slice(x, st, len, str)), want)) << shape_string(s);
        // Dynamic starts of several integer types.
        std::vector<Tensor> dyn;
        const DType it[] = {DType::S32, DType::S8, DType::U16, DType::S64, DType::U32};
        for (size_t d = 0; d < st.size(); ++d) {
          DType ty = it[(d + rep) % 5];
          if (!device_has(device(), ty)) ty = DType::S32;
          auto sh = ref::make(ty, {});
          ref::set(sh, 0, ref::of_int(ty == DType::U16 || ty == DType::U32 ? std::abs(st[d]) * 3 : st[d]));
          dyn.push_back(upload(device(), sh));
          if (ty == DType::U16 || ty == DType::U32) st[d] = std::abs(st[d]) * 3;
        }
        EXPECT_TRUE(same_bits(download(slice_dynamic(x, dyn, len, str)), ref::slice(h, st, len, str)));
      }
    }
  });
  Tensor x = upload(device(), rand(DType::F32, {4}));
  EXPECT_NXVK_ERROR(slice(x, {0}, {5}, {1}), ErrorKind::InvalidArgument, "slice", "length 5");
  EXPECT_NXVK_ERROR(slice(x, {0}, {2}, {0}), ErrorKind::InvalidArgument, "slice", "stride 0");
}

TEST_F(ShapeOps, PutSliceClampsStarts) {
  for_types([&](DType t) {
    for (const Shape& s : std::vector<Shape>{{}, {9}, {6, 7}, {3, 1, 11}}) {
      auto h = rand(t, s);
      for (int rep = 0; rep < 3; ++rep) {
        Shape us;
        std::vector<int64_t> st;
        for (int64_t d : s) {
          us.push_back(1 + rng()() % d);
          st.push_back(static_cast<int64_t>(rng()() % 20) - 6);
        }
        auto u = rand(t, us);
        auto want = ref::put_slice(h, st, u, t);
        poison_cache(device(), want.bytes.size());
        Tensor x = upload(device(), h), ut = upload(device(), u);
        EXPECT_TRUE(same_bits(download(put_slice(x, st, ut, t)), want));
        std::vector<Tensor> dyn;
        for (int64_t v : st) {
          auto sh = ref::make(DType::S32, {});
          ref::set(sh, 0, ref::of_int(v));
          dyn.push_back(upload(device(), sh));
        }
        EXPECT_TRUE(same_bits(download(put_slice_dynamic(x, dyn, ut, t)), want));
      }
    }
  });
}

TEST_F(ShapeOps, PutSliceOfAnotherType) {
  auto h = random_tensor(rng(), DType::F32, {5, 4}, true);
  auto u = random_tensor(rng(), DType::S16, {2, 3}, true);
  auto want = ref::put_slice(h, {4, 1}, u, DType::F32);
  EXPECT_TRUE(same_bits(download(put_slice(upload(device(), h), {4, 1}, upload(device(), u), DType::F32)), want));
}

TEST_F(ShapeOps, ConcatenateAndStack) {
  for_types([&](DType t) {
    for (const Shape& s : std::vector<Shape>{{3}, {2, 5}, {4, 1, 3}}) {
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        for (int count : {1, 2, 5, 13}) {  // 13: more inputs than one kernel binds
          std::vector<ref::HostTensor> hs;
          std::vector<Tensor> xs;
          for (int k = 0; k < count; ++k) {
            Shape sk = s;
            sk[axis] = static_cast<int64_t>(rng()() % 4);  // includes empty parts
            if (k == 0) sk[axis] = std::max<int64_t>(1, sk[axis]);
            hs.push_back(rand(t, sk));
            xs.push_back(upload(device(), hs.back()));
          }
          auto want = ref::concatenate(hs, axis, t);
          poison_cache(device(), want.bytes.size());
          ASSERT_TRUE(same_bits(download(concatenate(xs, axis, t)), want)) << shape_string(s) << " axis " << axis;
        }
      }
      for (int64_t axis = 0; axis <= static_cast<int64_t>(s.size()); ++axis) {
        std::vector<ref::HostTensor> hs;
        std::vector<Tensor> xs;
        for (int k = 0; k < 3; ++k) {
          hs.push_back(rand(t, s));
          xs.push_back(upload(device(), hs.back()));
        }
        EXPECT_TRUE(same_bits(download(stack(xs, axis, t)), ref::stack(hs, axis, t)));
      }
    }
  });
  // Mixed operand types: Nx converts each to the output type.
  auto a = random_tensor(rng(), DType::U8, {2, 3}, true), b = random_tensor(rng(), DType::F16, {1, 3}, true);
  std::vector<ref::HostTensor> hs{a, b};
  EXPECT_TRUE(same_bits(download(concatenate({upload(device(), a), upload(device(), b)}, 0, DType::F32)),
                        ref::concatenate(hs, 0, DType::F32)));
  Tensor x = upload(device(), rand(DType::F32, {2, 3})), y = upload(device(), rand(DType::F32, {2, 4}));
  EXPECT_NXVK_ERROR(concatenate({x, y}, 0, DType::F32), ErrorKind::InvalidArgument, "concatenate", "{2, 4}");
}

TEST_F(ShapeOps, LargerThanOneDispatch) {
  // 65535 workgroups * 256 invocations cover fewer elements than this: grid-stride loops.
  const Shape s = {3, 65535 * 256 / 3 + 7};
  auto h = rand(DType::U8, s);
  Tensor x = upload(device(), h);
  EXPECT_TRUE(same_bits(download(transpose(x, {1, 0})), ref::transpose(h, {1, 0})));
  EXPECT_TRUE(same_bits(download(reverse(x, {1})), ref::reverse(h, {1})));
}

// ---- Properties (rapidcheck): exact laws of the data moves. ----

TEST_F(ShapeOps, PropertyTransposeInverseIsIdentity) {
  Device& dev = device();
  EXPECT_TRUE(rc::check("transpose by p then by p^-1 is the identity, bitwise", [&] {
    const int rank = *rc::gen::inRange(0, 5);
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(*rc::gen::inRange(1, 7));
    std::vector<int64_t> p(rank);
    std::iota(p.begin(), p.end(), 0);
    p = *rc::gen::elementOf(std::vector<std::vector<int64_t>>{p});
    std::vector<int64_t> perm = p;
    const auto seed = *rc::gen::arbitrary<uint32_t>();
    std::mt19937 r(seed);
    std::shuffle(perm.begin(), perm.end(), r);
    std::vector<int64_t> inv(rank);
    for (int d = 0; d < rank; ++d) inv[perm[d]] = d;
    const DType t = *rc::gen::elementOf(std::vector<DType>{DType::U8, DType::S16, DType::F32, DType::C64});
    auto h = random_tensor(r, t, s);
    RC_ASSERT(download(transpose(transpose(upload(dev, h), perm), inv)).bytes == h.bytes);
  }));
}

TEST_F(ShapeOps, PropertySliceOfPadIsOriginal) {
  Device& dev = device();
  EXPECT_TRUE(rc::check("slicing the pad back out gives the original", [&] {
    const int rank = *rc::gen::inRange(1, 4);
    Shape s;
    std::vector<PadConfig> c;
    std::vector<int64_t> st, len, str;
    for (int d = 0; d < rank; ++d) {
      s.push_back(*rc::gen::inRange(1, 6));
      PadConfig pc{*rc::gen::inRange(0, 4), *rc::gen::inRange(0, 4), *rc::gen::inRange(0, 3)};
      c.push_back(pc);
      st.push_back(pc.low);
      len.push_back((s[d] - 1) * (pc.interior + 1) + 1);
      str.push_back(pc.interior + 1);
    }
    std::mt19937 r(*rc::gen::arbitrary<uint32_t>());
    auto h = random_tensor(r, DType::BF16, s), v = random_tensor(r, DType::BF16, {});
    Tensor p = pad(upload(dev, h), upload(dev, v), c, DType::BF16);
    RC_ASSERT(download(slice(p, st, len, str)).bytes == h.bytes);
  }));
}

TEST_F(ShapeOps, PropertyConcatenateThenSliceGivesParts) {
  Device& dev = device();
  EXPECT_TRUE(rc::check("concatenate then slice gives back each part", [&] {
    const int rank = *rc::gen::inRange(1, 4);
    const int axis = *rc::gen::inRange(0, rank);
    const int parts = *rc::gen::inRange(1, 9);
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(*rc::gen::inRange(1, 5));
    std::mt19937 r(*rc::gen::arbitrary<uint32_t>());
    std::vector<ref::HostTensor> hs;
    std::vector<Tensor> xs;
    for (int k = 0; k < parts; ++k) {
      Shape sk = s;
      sk[axis] = *rc::gen::inRange(1, 4);
      hs.push_back(random_tensor(r, DType::S8, sk));
      xs.push_back(upload(dev, hs.back()));
    }
    Tensor c = concatenate(xs, axis, DType::S8);
    int64_t off = 0;
    for (const auto& h : hs) {
      std::vector<int64_t> st(rank, 0), len = h.shape, str(rank, 1);
      st[axis] = off;
      off += h.shape[axis];
      RC_ASSERT(download(slice(c, st, len, str)).bytes == h.bytes);
    }
  }));
}

// A device without f64 and int64: the f32 paths work, f64 tensors are refused by name.
TEST_F(ShapeOps, WithoutFloat64AndInt64) {
  auto dev = open_device(DeviceOptions{.disable = {"f64", "int64"}});
  for (DType t : {DType::U8, DType::S16, DType::F32, DType::BF16, DType::C64}) {
    auto h = random_tensor(rng(), t, {5, 7});
    Tensor x = upload(*dev, h);
    EXPECT_TRUE(same_bits(download(transpose(x, {1, 0})), ref::transpose(h, {1, 0})));
    EXPECT_TRUE(same_bits(download(reverse(x, {0, 1})), ref::reverse(h, {0, 1})));
    EXPECT_TRUE(same_bits(download(slice(x, {1, 2}, {3, 4}, {2, 1})), ref::slice(h, {1, 2}, {3, 4}, {2, 1})));
  }
  auto h = ref::make(DType::F64, {2});
  EXPECT_NXVK_ERROR(upload(*dev, h), ErrorKind::Unsupported, "unsupported on this device: f64");
}

}  // namespace
}  // namespace nxvk::test
