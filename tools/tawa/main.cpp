#include <iostream>
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
int main(int argc, char** argv) {
  try {
    auto m = tawa::ir::parseFile(argv[1]);
    tawa::ir::verify(*m);
    std::cout << tawa::ir::print(*m);
  } catch (tawa::UserError& e) { std::cerr << e.format() << "\n"; return 1; }
}
