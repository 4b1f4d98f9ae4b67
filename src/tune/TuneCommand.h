// `tawa tune`: registers the subcommand with CLI11 and hands back what to run once it parsed.
//
//   std::function<int()> tuneAction = tawa::tune::addTuneCommand(app);   // before app.parse
//   if (app.got_subcommand("tune")) return tuneAction();                 // inside the try block
//
// The action throws tawa::UserError for user errors (the caller prints it and exits 1) and returns 0.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace tawa::tune {

std::function<int()> addTuneCommand(CLI::App& app);

}  // namespace tawa::tune
