module example.com/todo

go 1.22
