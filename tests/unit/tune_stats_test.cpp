// PCA and z-scored nearest neighbours on synthetic data with known answers (fresh seeds).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tune/Stats.h"

using namespace tawa::tune;

TEST(TunePca, RecoversADominantDirection) {
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  const int d = 5, n = 200;
  Eigen::VectorXd v(d);
  for (int j = 0; j < d; ++j) v(j) = g(rng);
  v.normalize();
  Eigen::VectorXd mu = Eigen::VectorXd::Constant(d, 0.5);
  Eigen::MatrixXd X(n, d);
  for (int i = 0; i < n; ++i) {
    double t = 3.0 * g(rng);
    for (int j = 0; j < d; ++j) X(i, j) = mu(j) + t * v(j) + 0.05 * g(rng);
  }
  Pca p = fitPca(X, 0.90);
  ASSERT_EQ(p.components.cols(), 1);
  EXPECT_GT(std::abs(p.components.col(0).dot(v)), 0.999);
  EXPECT_GE(p.explained, 0.90);
  EXPECT_NEAR(p.variances(0), 9.0, 9.0 * 0.35);  // sample variance of 3·N(0,1) over 200 points
  EXPECT_LT((p.mean - mu).norm(), 1.0);
}

TEST(TunePca, KeepsEnoughComponentsForNinetyPercent) {
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  // Axis variances 4, 4, 1, 0.01: two components explain 8/9.01 < 90%, three explain > 99%.
  const int n = 4000;
  Eigen::MatrixXd X(n, 4);
  for (int i = 0; i < n; ++i) X.row(i) << 2 * g(rng), 2 * g(rng), g(rng), 0.1 * g(rng);
  Pca p = fitPca(X, 0.90);
  EXPECT_EQ(p.components.cols(), 3);
  // The third component is the third axis.
  EXPECT_GT(std::abs(p.components(2, 2)), 0.99);
  Pca all = fitPca(X, 1.0);
  EXPECT_EQ(all.components.cols(), 4);
}

TEST(TunePca, IdenticalPointsHaveNoComponents) {
  Eigen::MatrixXd X = Eigen::MatrixXd::Constant(5, 3, 0.25);
  Pca p = fitPca(X);
  EXPECT_EQ(p.components.cols(), 0);
  EXPECT_DOUBLE_EQ(p.mean(1), 0.25);
}

TEST(TuneKnn, ZScoringStopsOneScaleFromDominating) {
  // Feature 0 varies in thousands, feature 1 in units. Raw distance would pick row 1 (close in
  // feature 0); z-scored, the target's feature 1 matches row 2 and its feature 0 is within noise.
  Eigen::MatrixXd rows(4, 2);
  rows << 1000, 0.0,  //
      2000, 0.0,      //
      3000, 5.0,      //
      4000, 0.0;
  Eigen::VectorXd t(2);
  t << 2100, 5.0;
  auto nn = nearestByZScore(rows, t, 2);
  ASSERT_EQ(nn.size(), 2u);
  EXPECT_EQ(nn[0].index, 2u);
  EXPECT_LE(nn[0].distance, nn[1].distance);
}

TEST(TuneKnn, FindsThePlantedNeighbours) {
  uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  const int n = 30, d = 6;
  Eigen::MatrixXd rows(n, d);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) rows(i, j) = g(rng) * (j + 1);
  Eigen::VectorXd t = rows.row(17).transpose();
  for (int j = 0; j < d; ++j) t(j) += 0.001 * g(rng);
  auto nn = nearestByZScore(rows, t, 3);
  ASSERT_EQ(nn.size(), 3u);
  EXPECT_EQ(nn[0].index, 17u);
  EXPECT_LT(nn[0].distance, 0.05);
  // A feature constant over the rows is ignored instead of dividing by zero.
  rows.col(2).setConstant(4.0);
  auto nn2 = nearestByZScore(rows, t, 1);
  EXPECT_TRUE(std::isfinite(nn2[0].distance));
}
