package main

import "github.com/spf13/cobra"

func newQuickstartCmd() *cobra.Command { return &cobra.Command{Use: "quickstart"} }
