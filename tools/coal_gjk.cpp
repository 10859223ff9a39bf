// coal 3's GJK (the successor of HPP-FCL, where GJK++ implemented its accelerations) on the
// problems of contactbench's `gjk-tab1` page, under the same protocol: duality-gap
// tolerance 1e-8 (absolute), boolean collision threshold 1e-4 m, initial guess the
// difference of the bounding-box centres, each problem timed `runs` times and the fastest
// 90 % averaged. Built and run by tools/coal_gjk.sh against the coal wheel of `pip install
// pin`; Python cannot time sub-microsecond calls (a call costs about 2 µs).
//
// usage: coal_gjk PROBLEMS.csv RUNS > OUT.csv
// PROBLEMS.csv: problem, mesh_a, mesh_b, path_a, path_b, target_distance_m,
// ax ay az aqx aqy aqz aqw, bx by bz bqx bqy bqz bqw (the `<page>-problems.csv` the
// gjk-tab1 and cda-tab1 pages write; paths without commas). OUT.csv: per problem, variant
// and query, coal's iterations, time, status, the distance it found and its hulls' vertex
// counts (to check that both sides solved the same problem).

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <coal/BVH/BVH_model.h>
#include <coal/mesh_loader/loader.h>
#include <coal/narrowphase/gjk.h>
#include <coal/narrowphase/minkowski_difference.h>

using coal::Vec3s;

// The convex hull of a mesh file (qhull, as coal builds it for pinocchio's geometry).
static std::shared_ptr<coal::ConvexBase> load_hull(const std::string& path) {
  coal::MeshLoader loader;
  coal::BVHModelPtr_t bvh = loader.load(path, Vec3s::Ones());
  if (!bvh || bvh->num_vertices < 4) throw std::runtime_error(path + ": fewer than 4 vertices");
  bvh->buildConvexHull(true, "Qt");
  bvh->convex->computeLocalAABB();
  return bvh->convex;
}

static coal::Transform3s pose(const std::vector<double>& v, size_t at) {
  coal::Quatf q(v[at + 6], v[at + 3], v[at + 4], v[at + 5]);
  return coal::Transform3s(q.normalized().toRotationMatrix(),
                           Vec3s(v[at], v[at + 1], v[at + 2]));
}

struct Variant {
  const char* name;
  coal::GJKVariant variant;
};

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: coal_gjk PROBLEMS.csv RUNS\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "cannot read " << argv[1] << "\n";
    return 2;
  }
  const int runs = std::max(1, std::atoi(argv[2]));
  const Variant variants[] = {
      {"coal GJK", coal::GJKVariant::DefaultGJK},
      {"coal Polyak", coal::GJKVariant::PolyakAcceleration},
      {"coal Nesterov", coal::GJKVariant::NesterovAcceleration},
  };
  std::map<std::string, std::shared_ptr<coal::ConvexBase>> hulls;
  auto hull = [&](const std::string& path) {
    auto it = hulls.find(path);
    if (it == hulls.end()) it = hulls.emplace(path, load_hull(path)).first;
    return it->second;
  };
  std::cout << "problem,variant,query,iterations,time_us,status,distance_m,"
               "hull_vertices_a,hull_vertices_b\n";
  std::cout.precision(10);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell, problem, mesh_a, mesh_b, path_a, path_b;
    std::getline(row, problem, ',');
    std::getline(row, mesh_a, ',');
    std::getline(row, mesh_b, ',');
    std::getline(row, path_a, ',');
    std::getline(row, path_b, ',');
    std::getline(row, cell, ',');  // target distance
    std::vector<double> v;
    try {
      while (std::getline(row, cell, ',')) v.push_back(std::stod(cell));
    } catch (const std::exception&) {
      std::cerr << "problem " << problem << ": `" << cell << "` is not a number\n";
      return 2;
    }
    if (v.size() != 14) {
      std::cerr << "problem " << problem << ": expected 14 pose numbers\n";
      return 2;
    }
    std::shared_ptr<coal::ConvexBase> a, b;
    try {
      a = hull(path_a);
      b = hull(path_b);
    } catch (const std::exception& e) {
      std::cerr << "problem " << problem << ": cannot load a mesh: " << e.what() << "\n";
      return 2;
    }
    const coal::Transform3s ta = pose(v, 0), tb = pose(v, 7);
    coal::details::MinkowskiDiff md;
    md.set(a.get(), b.get(), ta, tb);
    // x0 = c1 - c2 in the frame of shape 0 (GJK++ Sec. IV).
    const coal::Transform3s b_in_a = ta.inverseTimes(tb);
    const Vec3s guess = a->aabb_center - b_in_a.transform(b->aabb_center);
    for (const auto& variant : variants) {
      for (const bool collision : {false, true}) {
        coal::details::GJK gjk(1000, 1e-8);
        gjk.gjk_variant = variant.variant;
        gjk.convergence_criterion = coal::GJKConvergenceCriterion::DualityGap;
        gjk.convergence_criterion_type = coal::GJKConvergenceCriterionType::Absolute;
        if (collision) gjk.setDistanceEarlyBreak(1e-4);
        const auto status = gjk.evaluate(md, guess);
        const size_t iterations = gjk.getNumIterations();
        const double distance = gjk.distance;
        std::vector<double> times(runs);
        for (int k = 0; k < runs; ++k) {
          const auto start = std::chrono::steady_clock::now();
          gjk.evaluate(md, guess);
          const auto stop = std::chrono::steady_clock::now();
          times[k] = std::chrono::duration<double, std::micro>(stop - start).count();
        }
        std::sort(times.begin(), times.end());
        const size_t kept = std::max<size_t>(1, static_cast<size_t>(runs * 0.9 + 0.5));
        const double mean =
            std::accumulate(times.begin(), times.begin() + kept, 0.0) / kept;
        std::cout << problem << "," << variant.name << ","
                  << (collision ? "collision" : "distance") << "," << iterations
                  << "," << mean << "," << static_cast<int>(status) << "," << distance
                  << "," << a->num_points << "," << b->num_points << "\n";
      }
    }
  }
  return 0;
}
