package main

import (
	"fmt"

	"cairn/commands"
)

func main() { fmt.Print(commands.READMETable()) }
