// The statistics of the MaSiF search: z-scored nearest neighbours and PCA (Eigen).
#pragma once

#include <vector>

#include <Eigen/Dense>

namespace tawa::tune {

// Rows of `rows` and `target` z-scored by the mean and standard deviation of `rows` (a feature that
// does not vary there is dropped from the distance), then the indices of the k rows nearest to the
// target by Euclidean distance, nearest first, with their distances.
struct Neighbour {
  size_t index;
  double distance;
};
std::vector<Neighbour> nearestByZScore(const Eigen::MatrixXd& rows, const Eigen::VectorXd& target, size_t k);

// Spearman's rank correlation of two equally long series (ties take their mean rank); 0 when either
// series is constant or shorter than 2.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// Principal components of the rows of X (one observation per row), keeping the fewest leading
// components whose variance reaches `keep` of the total. With zero total variance, none are kept.
struct Pca {
  Eigen::VectorXd mean;        // d
  Eigen::MatrixXd components;  // d x p, orthonormal columns, by decreasing variance
  Eigen::VectorXd variances;   // p
  double explained = 0;        // share of the total variance the kept components explain
};
Pca fitPca(const Eigen::MatrixXd& X, double keep = 0.90);

}  // namespace tawa::tune
