#include "tune/Stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tawa::tune {

std::vector<Neighbour> nearestByZScore(const Eigen::MatrixXd& rows, const Eigen::VectorXd& target, size_t k) {
  const Eigen::Index n = rows.rows(), d = rows.cols();
  std::vector<Neighbour> out;
  if (n == 0) return out;
  Eigen::VectorXd mean = rows.colwise().mean().transpose();
  Eigen::VectorXd sd(d);
  for (Eigen::Index j = 0; j < d; ++j) {
    double s = (rows.col(j).array() - mean(j)).square().sum();
    sd(j) = n > 1 ? std::sqrt(s / static_cast<double>(n - 1)) : 0.0;
  }
  Eigen::VectorXd t = target;
  for (Eigen::Index i = 0; i < n; ++i) {
    double dist = 0;
    for (Eigen::Index j = 0; j < d; ++j) {
      if (sd(j) < 1e-12) continue;
      double e = (rows(i, j) - t(j)) / sd(j);
      dist += e * e;
    }
    out.push_back({static_cast<size_t>(i), std::sqrt(dist)});
  }
  std::stable_sort(out.begin(), out.end(), [](const Neighbour& a, const Neighbour& b) { return a.distance < b.distance; });
  if (out.size() > k) out.resize(k);
  return out;
}

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> o(v.size());
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < o.size();) {
    size_t j = i;
    while (j + 1 < o.size() && v[o[j + 1]] == v[o[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[o[k]] = 0.5 * static_cast<double>(i + j);
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return 0;
  auto a = ranks(x), b = ranks(y);
  const double n = static_cast<double>(a.size());
  double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double num = 0, da = 0, db = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - ma) * (b[i] - mb);
    da += (a[i] - ma) * (a[i] - ma);
    db += (b[i] - mb) * (b[i] - mb);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : 0;
}

Pca fitPca(const Eigen::MatrixXd& X, double keep) {
  Pca p;
  const Eigen::Index n = X.rows(), d = X.cols();
  p.mean = n > 0 ? Eigen::VectorXd(X.colwise().mean().transpose()) : Eigen::VectorXd::Zero(d);
  p.components.resize(d, 0);
  p.variances.resize(0);
  if (n < 2) return p;
  Eigen::MatrixXd C = X.rowwise() - p.mean.transpose();
  Eigen::MatrixXd cov = (C.transpose() * C) / static_cast<double>(n - 1);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(cov);
  // Eigen returns eigenvalues in increasing order; walk them from the largest.
  Eigen::VectorXd ev = es.eigenvalues().cwiseMax(0.0);
  double total = ev.sum();
  if (total <= 1e-15) return p;
  std::vector<Eigen::Index> order(static_cast<size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) { return ev(a) > ev(b); });
  double acc = 0;
  size_t kept = 0;
  while (kept < order.size() && acc < keep * total - 1e-12) {
    acc += ev(order[kept]);
    ++kept;
  }
  p.components.resize(d, static_cast<Eigen::Index>(kept));
  p.variances.resize(static_cast<Eigen::Index>(kept));
  for (size_t j = 0; j < kept; ++j) {
    Eigen::VectorXd v = es.eigenvectors().col(order[j]);
    // A fixed sign (largest entry positive) makes the result reproducible across Eigen versions.
    Eigen::Index arg;
    v.cwiseAbs().maxCoeff(&arg);
    if (v(arg) < 0) v = -v;
    p.components.col(static_cast<Eigen::Index>(j)) = v;
    p.variances(static_cast<Eigen::Index>(j)) = ev(order[j]);
  }
  p.explained = acc / total;
  return p;
}

}  // namespace tawa::tune
