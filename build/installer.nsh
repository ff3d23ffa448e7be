; Card Wallet Worker's additions to electron-builder's NSIS installer (nsis.include in
; electron-builder.yml; checked by test/packaging/installer-and-signing.test.ts).
;
; The installer is per user only (nsis.oneClick, perMachine false): updates then never need an
; administrator. The Smart Card service setting, which does, is made once from the app's window
; (main/smart-card-service.ts) or by IT (sc config SCardSvr start= auto); an installer hook
; would run again on every update and undo what IT chose.

!include LogicLib.nsh

!macro customInit
  ; A copy an earlier version installed "for all users" (its key under HKLM) starts at login
  ; too and cannot update itself: say so, once, when installing by hand (not on an update).
  ReadRegStr $0 HKLM "${INSTALL_REGISTRY_KEY}" InstallLocation
  ${If} $0 != ""
  ${AndIfNot} ${isUpdated}
    MessageBox MB_OK|MB_ICONINFORMATION "Card Wallet Worker is also installed for all users of this computer, in $0.$\r$\n$\r$\nThis installer installs it for you only, so that updates need no administrator. Ask your IT to uninstall the copy for all users (Settings > Apps), so that only one starts." /SD IDOK
  ${EndIf}
!macroend
