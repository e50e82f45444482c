module github.com/constraintlab/assistant/client

go 1.23
