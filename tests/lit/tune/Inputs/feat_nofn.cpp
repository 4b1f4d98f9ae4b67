// declares, defines nothing
extern int counter;
