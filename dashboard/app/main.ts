import { mount } from "svelte";
import "uplot/dist/uPlot.min.css";
import "./styles.css";
import App from "./App.svelte";

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");
mount(App, { target });
